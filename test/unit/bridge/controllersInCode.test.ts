import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { controllerSetupLines, controllersInText, findControllersInCode, findManagersInCode, moduleUsesBridgeQueue } from '../../../src/core/bridge/controllersInCode.ts';

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
    { file: 'internal/controller/bucket_controller.go', line: 6, via: 'builder', name: 'bucket', forType: 'storagev1.Bucket', reconciler: 'r', bridged: { options: false, wrap: false } },
    { file: 'internal/controller/bucket_controller.go', line: 16, via: 'builder', name: 'bucket-mirror', forType: 'storagev1.Bucket', withOptions: 'bridge.Options(mgr, "bucket-mirror", controller.Options{MaxConcurrentReconciles: 2})', reconciler: 'bridge.Wrap(mgr, "bucket-mirror", r, &storagev1.Bucket{})', bridged: { options: true, wrap: true } },
    { file: 'internal/controller/bucket_controller.go', line: 24, via: 'new', name: 'lamp-keeper', bridged: { options: false, wrap: false } },
    { file: 'internal/controller/bucket_controller.go', line: 30, via: 'builder', name: 'per-cluster', reconciler: 'r', bridged: { options: false, wrap: false } },
  ]);
  assert.deepEqual(controllersInText('x.go', 'package x\nfunc f() { ctrl.NewControllerManagedBy(mgr).Complete(r) }\n'), [{ file: 'x.go', line: 2, via: 'builder', reconciler: 'r', bridged: { options: false, wrap: false } }], 'no Named, no For: no name');
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

test('a controller named by an identifier (Named(controllerName), controller.New(names.Lamp, …)): its value from a string constant of the file or the module, never the kind of For; the expression itself is kept for both calls', () => {
  const file = `package controller

const controllerName = "teapot-keeper"

const (
	cupName   string = "cup-washer"
	otherName        = "x"
)

func (r *TeapotReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named(controllerName).
		For(&brewv1.Teapot{}).
		Complete(r)
}

func (r *CupReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(cupName).For(&brewv1.Cup{}).Complete(r)
}

func (r *SaucerReconciler) SetupWithManager(mgr ctrl.Manager, name string) error {
	return ctrl.NewControllerManagedBy(mgr).Named(name).For(&brewv1.Saucer{}).Complete(r)
}

func setupLamp(mgr manager.Manager, r reconcile.Reconciler) error {
	_, err := controller.New(names.Lamp, mgr, controller.Options{Reconciler: r})
	return err
}
`;
  const one = controllersInText('internal/controller/brew.go', file).map((c) => [c.line, c.name, c.nameExpr]);
  assert.deepEqual(one, [
    [11, 'teapot-keeper', 'controllerName'],
    [18, 'cup-washer', 'cupName'],
    [22, undefined, 'name'], // a parameter: its value is not in the code (and it is not "saucer")
    [26, undefined, 'names.Lamp'], // another package's constant: not in this file
  ]);

  const dir = mkdtempSync(join(tmpdir(), 'rl-ctrl-names-'));
  try {
    mkdirSync(join(dir, 'internal', 'names'), { recursive: true });
    mkdirSync(join(dir, 'internal', 'controller'), { recursive: true });
    writeFileSync(join(dir, 'internal', 'controller', 'brew.go'), file);
    writeFileSync(join(dir, 'internal', 'names', 'names.go'), 'package names\n\nconst (\n\tLamp = "lamp-keeper"\n\t// Teapot is documented\n\tTeapot = "teapot-keeper"\n)\n');
    // A function's local of the same name as the parameter says nothing about it.
    writeFileSync(join(dir, 'internal', 'controller', 'util.go'), 'package controller\n\nfunc label() string {\n\tname := "decoy"\n\tname = "decoy-2"\n\treturn name\n}\n');
    const module = findControllersInCode(dir).map((c) => [c.line, c.name, c.nameExpr, c.via]);
    assert.deepEqual(module, [
      [11, 'teapot-keeper', 'controllerName', 'builder'],
      [18, 'cup-washer', 'cupName', 'builder'],
      [22, undefined, 'name', 'builder'],
      [26, 'lamp-keeper', 'names.Lamp', 'new'],
    ]);
    // An identifier the module gives two values is not guessed.
    writeFileSync(join(dir, 'internal', 'names', 'more.go'), 'package more\n\nvar Lamp = "lamp-watcher"\n');
    assert.deepEqual(findControllersInCode(dir).find((c) => c.via === 'new')?.name, undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('controllerSetupLines: a controller named by an identifier gets that identifier in both calls (its value beside it when read); a literal name is quoted; the kind of For is never used for a Named(identifier)', () => {
  const lines = controllerSetupLines(controllersInText('c.go', `package c
const controllerName = "teapot-keeper"
func a(mgr ctrl.Manager) error { return ctrl.NewControllerManagedBy(mgr).Named(controllerName).For(&brewv1.Teapot{}).Complete(r) }
func b(mgr ctrl.Manager, name string) error { return ctrl.NewControllerManagedBy(mgr).Named(name).For(&brewv1.Saucer{}).Complete(r) }
func c(mgr ctrl.Manager) error { _, err := controller.New(names.Lamp, mgr, controller.Options{Reconciler: r}); return err }
func d(mgr ctrl.Manager) error { return ctrl.NewControllerManagedBy(mgr).For(&brewv1.Cup{}).Complete(r) }
`)).filter((l) => l.includes('c.go'));
  assert.deepEqual(lines, [
    '   - `c.go:3` — controller `teapot-keeper` (`controllerName`) (For `brewv1.Teapot`): `WithOptions(bridge.Options(mgr, controllerName, controller.Options{}))` and `Complete(bridge.Wrap(mgr, controllerName, r, &brewv1.Teapot{}))`.',
    '   - `c.go:4` — the controller named by `name` (For `brewv1.Saucer`): `WithOptions(bridge.Options(mgr, name, controller.Options{}))` and `Complete(bridge.Wrap(mgr, name, r, &brewv1.Saucer{}))`.',
    '   - `c.go:5` — the controller named by `names.Lamp`: `controller.New(names.Lamp, mgr, bridge.Options(mgr, names.Lamp, controller.Options{Reconciler: bridge.Wrap(mgr, names.Lamp, r)}))`.',
    '   - `c.go:6` — controller `cup` (For `brewv1.Cup`): `WithOptions(bridge.Options(mgr, "cup", controller.Options{}))` and `Complete(bridge.Wrap(mgr, "cup", r, &brewv1.Cup{}))`.',
  ]);
});

test('controllerSetupLines: the options and the reconciler the chain already passes go into the two calls (copying them keeps MaxConcurrentReconciles), and an object in a variable given to For names the kind', () => {
  const lines = controllerSetupLines(controllersInText('main.go', `package main
func main() {
	if err := ctrl.NewControllerManagedBy(mgr).
		For(&appsv1.Deployment{}, builder.WithPredicates(hasAnno)).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: 3,
		}).
		Complete(&ExposeReconciler{mgr.GetClient()}); err != nil {
		os.Exit(1)
	}
	gadget := &unstructured.Unstructured{}
	_ = ctrl.NewControllerManagedBy(mgr).For(gadget).Named("gadget").Complete(&GadgetReconciler{Client: mgr.GetClient(), failures: map[string]int{}})
	_ = ctrl.NewControllerManagedBy(mgr).For(&v1.Odd{}).WithOptions(opts(1, 2)).Complete(r)
}
`)).filter((l) => l.includes('main.go'));
  assert.deepEqual(lines, [
    '   - `main.go:3` — controller `deployment` (For `appsv1.Deployment`): `WithOptions(bridge.Options(mgr, "deployment", controller.Options{MaxConcurrentReconciles: 3}))` and `Complete(bridge.Wrap(mgr, "deployment", &ExposeReconciler{mgr.GetClient()}, &appsv1.Deployment{}))`.',
    '   - `main.go:12` — controller `gadget`: `WithOptions(bridge.Options(mgr, "gadget", controller.Options{}))` and `Complete(bridge.Wrap(mgr, "gadget", &GadgetReconciler{Client: mgr.GetClient(), failures: map[string]int{}}, gadget))`.',
    '   - `main.go:13` — controller `odd` (For `v1.Odd`): `WithOptions(bridge.Options(mgr, "odd", opts(1, 2)))` and `Complete(bridge.Wrap(mgr, "odd", r, &v1.Odd{}))`.',
  ]);
});
