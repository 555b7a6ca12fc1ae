package bridge

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// TestCheckInstanceServesNoWebhooks: a program that registers a webhook (kubebuilder's SetupWebhookWithManager) runs
// as a check instance with no serving certificate anywhere: its controllers start and reconcile, and the webhook
// sits on the idle server. The same program outside check mode stops at start-up for want of the certificate, which
// is what the idle server spares a check instance (on the local control plane).
func TestCheckInstanceServesNoWebhooks(t *testing.T) {
	plain := realClient(t)
	ns := scratchNamespace(t, plain)
	e, h := checkInstanceHub(t, ns)
	s := apiServerSetup{plain: plain, ns: ns, e: e, h: h, mgr: realManager(t, h, ns)}
	if _, ok := s.mgr.GetWebhookServer().(idleWebhookServer); !ok {
		t.Fatalf("a check instance's webhook server is %T", s.mgr.GetWebhookServer())
	}
	s.mgr.GetWebhookServer().Register("/validate-configmap", http.NotFoundHandler())
	if s.mgr.GetWebhookServer().WebhookMux() == nil {
		t.Fatal("no mux")
	}
	reconciled := make(chan string, 8)
	s.configMapController(t, controller.Options{}, reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
		reconciled <- req.Name
		return reconcile.Result{}, nil
	}))
	startManager(t, s.mgr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := plain.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "seen", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case name := <-reconciled:
			if name == "seen" {
				return
			}
		case <-ctx.Done():
			t.Fatal("the check instance's controller never reconciled: did its webhook server stop the manager?")
		}
	}
}

// TestProgramOutsideCheckModeNeedsItsWebhookCertificate is the contrast: the developer's own instance keeps
// controller-runtime's webhook server, which stops the manager when its certificate directory is empty.
func TestProgramOutsideCheckModeNeedsItsWebhookCertificate(t *testing.T) {
	cfg := realConfig(t)
	e := newTestEditor(t, false)
	h := connectedHub(t, e)
	opts := manager.Options{
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer:          webhook.NewServer(webhook.Options{CertDir: t.TempDir(), Port: 0}),
	}
	setupWith(h, &opts)
	if _, idle := opts.WebhookServer.(idleWebhookServer); idle {
		t.Fatal("the developer's own instance got the idle webhook server")
	}
	mgr, err := manager.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	mgr.GetWebhookServer().Register("/validate-configmap", http.NotFoundHandler())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = mgr.Start(ctx)
	if err == nil || !strings.Contains(err.Error(), "tls.crt") {
		t.Fatalf("Start without a certificate: %v", err)
	}
}
