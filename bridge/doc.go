// Package bridge connects a controller-runtime controller to Reconcile Lab: the editor sees every per-key
// transition of the controller's work queue (with every cause since the key's last Get), every reconcile and
// every API write, and can pause the queue, step one reconcile, step one key, reset a key's backoff and run a
// dry-run reconcile — inside the process, so informers, leader-election renewals and probes keep running.
//
// Supported: controller-runtime v0.25.x (built and tested with v0.25.3, k8s.io/* v0.37.x, Go ≥ 1.26). The APIs
// used (controller.Options.NewQueue, priorityqueue.PriorityQueue, interceptor.Funcs, manager.Options.NewClient /
// NewCache, controller.ReconcileIDFromContext) exist unchanged since v0.23, but only v0.25 is tested.
//
// Adoption (see Setup, Options, Wrap; WrapTyped for a controller with a custom request type, typed.go): with
// RECONCILE_LAB_BRIDGE unset every factory returns controller-runtime's
// stock object and nothing changes. With it set the process dials the editor (protocol.json next to this file).
package bridge
