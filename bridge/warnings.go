package bridge

import (
	"context"
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Server warnings per write. kube-apiserver answers a write with HTTP Warning headers for what it did not take as
// sent, most often `unknown field "spec.x"`: a field the resource's schema lacks, dropped before storing (a Go type
// ahead of its CRD, a misspelt json tag). client-go hands each warning, with the request's context, to the rest
// config's WarningHandlerWithContext. The bridge client's config gets a warningRouter: the warning goes to the write
// whose context carries a warningSink (journal.do adds one per write) and, always, on to the handler the program
// would have had, so its own logs are unchanged.

// warningRouter is the rest.WarningHandlerWithContext of the bridge client. Safe for concurrent use.
type warningRouter struct {
	// next receives every warning: the program's own handler (WarningHandlerWithContext or WarningHandler), or
	// controller-runtime's default, its KubeAPIWarningLogger, which client.New installs when none is set.
	next rest.WarningHandlerWithContext
}

// HandleWarningHeaderWithContext implements rest.WarningHandlerWithContext.
func (r warningRouter) HandleWarningHeaderWithContext(ctx context.Context, code int, agent, text string) {
	if s, ok := ctx.Value(warningSinkKey{}).(*warningSink); ok && code == 299 && text != "" {
		s.add(text)
	}
	r.next.HandleWarningHeaderWithContext(ctx, code, agent, text)
}

// legacyWarnings adapts a context-free rest.WarningHandler.
type legacyWarnings struct{ h rest.WarningHandler }

func (l legacyWarnings) HandleWarningHeaderWithContext(_ context.Context, code int, agent, text string) {
	l.h.HandleWarningHeader(code, agent, text)
}

// routeWarnings returns a copy of cfg whose warnings pass through a warningRouter; cfg itself is not modified.
func routeWarnings(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	var next rest.WarningHandlerWithContext
	switch {
	case cfg.WarningHandlerWithContext != nil:
		next = cfg.WarningHandlerWithContext
	case cfg.WarningHandler != nil:
		next = legacyWarnings{cfg.WarningHandler}
	default:
		// What controller-runtime's client.New sets when the config has no handler.
		next = log.NewKubeAPIWarningLogger(log.KubeAPIWarningLoggerOptions{Deduplicate: false})
	}
	out.WarningHandler = nil
	out.WarningHandlerWithContext = warningRouter{next: next}
	return out
}

type warningSinkKey struct{}

// warningSink collects the warnings of one write, in order, without duplicates.
type warningSink struct {
	mu   sync.Mutex
	list []string
}

// withWarningSink returns ctx carrying a new sink for the warnings of requests made with it.
func withWarningSink(ctx context.Context) (context.Context, *warningSink) {
	s := &warningSink{}
	return context.WithValue(ctx, warningSinkKey{}, s), s
}

func (s *warningSink) add(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.list {
		if t == text {
			return
		}
	}
	s.list = append(s.list, text)
}

// texts returns the warnings collected so far (nil when none).
func (s *warningSink) texts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.list) == 0 {
		return nil
	}
	return append([]string(nil), s.list...)
}
