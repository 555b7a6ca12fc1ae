package bridge

import (
	"fmt"
	"os"

	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// A dry-run-only process (EnvDryRunOnly; the CLI's dry-run --go and report --go --dry-run start the program so)
// must persist nothing while it runs, not only in the dry-run steps it is started for: a controller without
// bridge.Options starts reconciling at once, and a Runnable or code outside any reconcile may write too. Every write through the bridge
// client is therefore sent with dryRun=All (journal.dry). Writes through any other client cannot be forced, so a
// program whose manager client is not the bridge client (no bridge.Setup before ctrl.NewManager) is stopped at its
// first bridge.Options / bridge.Wrap — after ctrl.NewManager made the client, before mgr.Start starts a controller.

// guardDryRunOnly stops a dry-run-only process whose manager client is not the bridge client (see above). mgr is
// the manager given to Options or Wrap; without one (nil) nothing can be told yet and nothing is done.
func (h *hub) guardDryRunOnly(mgr manager.Manager) {
	if !h.dryRunOnly || mgr == nil || h.clientWrapped.Load() {
		return
	}
	fmt.Fprintln(os.Stderr, "reconcile-lab dry-run: this program's manager client is not the bridge client (bridge.Setup(&options) is not called before ctrl.NewManager), so its writes could not be kept from persisting; it stops here, before its controllers start. Add bridge.Setup(&options) (README \"Your Go controller\").")
	exit := h.exit
	if exit == nil {
		exit = os.Exit
	}
	exit(2)
}
