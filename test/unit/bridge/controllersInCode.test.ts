import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controllersInText, findControllersInCode, findManagersInCode, moduleUsesBridgeQueue } from '../../../src/core/bridge/controllersInCode.ts';

const KUBEBUILDER = `package controller

// SetupWithManager sets up the controller with the Manager.
// ctrl.NewControllerManagedBy(mgr).Named("commented-out") is not a controller.
func (r *BucketReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&storagev1.Bucket{}).
		Owns(&corev1.Secret{}).
		WithEventFilter(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool { return e.ObjectNew.GetName() != "(" }}).
		Complete(r)
}

func (r *MirrorReconciler) SetupWithManager(mgr ctrl.Manager) error {
	/* a block comment
	   with For(&x.Y{}) */
	return builder.ControllerManagedBy(mgr).
		Named("bucket-mirror").
		For(&storagev1.Bucket{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(bridge.Options(mgr, "bucket-mirror", controller.Options{MaxConcurrentReconciles: 2})).
		Complete(bridge.Wrap(mgr, "bucket-mirror", r, &storagev1.Bucket{}))
}

func setupLamp(mgr manager.Manager, r reconcile.Reconciler) error {
	c, err := controller.New("lamp-keeper", mgr, controller.Options{Reconciler: r})
	_ = c
	return err
}

func typed(mgr manager.Manager) error {
	return builder.TypedControllerManagedBy[ClusterRequest](mgr).
		Named("per-cluster").
		Complete(r)
}
`;

test('controllersInText: builder chains and controller.New, their names (Named, else the lower-cased kind of For), For type, what is bridged; comments ignored', () => {
  const found = controllersInText('internal/controller/bucket_controller.go', KUBEBUILDER);
  assert.deepEqual(found, [
    { file: 'internal/controller/bucket_controller.go', line: 6, via: 'builder', name: 'bucket', forType: 'storagev1.Bucket', bridged: { options: false, wrap: false } },
    { file: 'internal/controller/bucket_controller.go', line: 16, via: 'builder', name: 'bucket-mirror', forType: 'storagev1.Bucket', bridged: { options: true, wrap: true } },
    { file: 'internal/controller/bucket_controller.go', line: 24, via: 'new', name: 'lamp-keeper', bridged: { options: false, wrap: false } },
    { file: 'internal/controller/bucket_controller.go', line: 30, via: 'builder', name: 'per-cluster', bridged: { options: false, wrap: false } },
  ]);
  assert.deepEqual(controllersInText('x.go', 'package x\nfunc f() { ctrl.NewControllerManagedBy(mgr).Complete(r) }\n'), [{ file: 'x.go', line: 2, via: 'builder', bridged: { options: false, wrap: false } }], 'no Named, no For: no name');
});

test('findControllersInCode / findManagersInCode: the module\'s .go files, not tests, vendor, testdata or hidden directories; where the manager is built', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rl-ctrl-code-'));
  try {
    const write = (path: string, text: string) => {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    const chain = (kind: string) => `package p\nfunc s(mgr ctrl.Manager) error {\n\treturn ctrl.NewControllerManagedBy(mgr).For(&v1.${kind}{}).Complete(r)\n}\n`;
    write('internal/controller/queue_controller.go', chain('Queue'));
    write('cmd/main.go', 'package main\n\n// ctrl.NewManager( in a comment\nfunc main() {\n\tmgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), mgrOpts)\n}\n');
    write('tools/other.go', 'package tools\nfunc x() { bridge.Setup(&o); m, _ := manager.New(cfg, o) }\n');
    write('internal/controller/queue_controller_test.go', chain('Test'));
    write('vendor/x/y.go', chain('Vendored'));
    write('testdata/z.go', chain('Fixture'));
    write('.hidden/h.go', chain('Hidden'));
    assert.deepEqual(findControllersInCode(dir).map((c) => [c.file, c.line, c.name]), [['internal/controller/queue_controller.go', 3, 'queue']]);
    assert.deepEqual(findControllersInCode(join(dir, 'missing')), [], 'a directory that does not exist');
    assert.deepEqual(findManagersInCode(dir), [{ file: 'cmd/main.go', line: 5, setUp: false }, { file: 'tools/other.go', line: 2, setUp: true }]);
    assert.equal(moduleUsesBridgeQueue(dir), false, 'no bridge.Options anywhere');
    write('internal/controller/options.go', 'package controller\n// bridge.Options( in a comment does not count\nvar opts = bridge.Options(mgr, "queue", controller.Options{})\n');
    assert.equal(moduleUsesBridgeQueue(dir), true, 'options built in a variable count');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
