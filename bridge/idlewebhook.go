package bridge

import (
	"context"
	"net/http"

	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// idleWebhookServer is the webhook server of a check instance: webhooks register on it as usual (a duplicate path
// still panics, as controller-runtime's server does), but it listens on nothing and reads no certificate. The API
// server calls the webhooks of the developer's own deployment, never a check instance, and a real server there would
// either fight the developer's running instance for its port (9443 by default) or stop the instance at start-up for
// want of a serving certificate, before any controller runs.
type idleWebhookServer struct{ mux *http.ServeMux }

var _ webhook.Server = idleWebhookServer{}

func newIdleWebhookServer() idleWebhookServer { return idleWebhookServer{mux: http.NewServeMux()} }

// NeedLeaderElection is false, as for controller-runtime's server.
func (s idleWebhookServer) NeedLeaderElection() bool { return false }

// Register records hook at path on the mux; nothing serves it.
func (s idleWebhookServer) Register(path string, hook http.Handler) { s.mux.Handle(path, hook) }

// Start blocks until ctx ends and returns nil.
func (s idleWebhookServer) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

// StartedChecker is always healthy.
func (s idleWebhookServer) StartedChecker() healthz.Checker { return healthz.Ping }

// WebhookMux returns the mux the webhooks registered on.
func (s idleWebhookServer) WebhookMux() *http.ServeMux { return s.mux }
