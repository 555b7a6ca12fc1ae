// Shared setup of the extension-host suites that use the cluster (not a test file: index.ts loads *.test.ts only).
// The cluster is the real local control plane of the run (env RECONCILE_LAB_KUBECONFIG). Each suite gets its own
// namespace; the Widget CRD is installed once per run under a group unique to it (CRD names are cluster-wide) and
// removed by a root `after` hook, with its objects' finalizers stripped first so nothing stays Terminating.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { parseAllDocuments } from 'yaml';
import type { ReconcileLabApi } from '../../../../src/extension.ts';
import type { ReconcileLab } from '../../../../src/host/reconcileLab.ts';
import type { CommandResult } from '../../../../src/host/commands/args.ts';
import type { ResourceNode } from '../../../../src/host/views/resourcesTree.ts';
import { createDynamicClient, type DynamicKubeClient } from '../../../../src/core/k8s/dynamicClient.ts';
import { loadKubeConfig } from '../../../../src/core/k8s/kubeconfig.ts';
import type { GroupVersionResource, KubeObject } from '../../../../src/core/k8s/objects.ts';
import { KubeTransport } from '../../../../src/core/k8s/transport.ts';
import { createNamespace, installCrd, uniqueName, waitUntil } from '../../../integration/support/cluster.ts';

/** dist/test/suite.js → the repository root. */
export const ROOT = join(__dirname, '../..');
export { waitUntil, uniqueName };

export interface LabCluster {
  readonly kubeconfigPath: string;
  readonly transport: KubeTransport;
  readonly client: DynamicKubeClient;
}

let cluster: LabCluster | undefined;

export function labCluster(): LabCluster {
  if (cluster) return cluster;
  const kubeconfigPath = process.env.RECONCILE_LAB_KUBECONFIG;
  if (!kubeconfigPath) throw new Error('RECONCILE_LAB_KUBECONFIG is not set: the extension-host suites need the test cluster');
  const transport = new KubeTransport(loadKubeConfig({ path: kubeconfigPath }));
  cluster = { kubeconfigPath, transport, client: createDynamicClient(transport, { fieldManager: 'reconcile-lab-vscode-test' }) };
  return cluster;
}

export interface WidgetCrd {
  readonly group: string;
  readonly gvr: GroupVersionResource;
  readonly apiVersion: string;
  /** The resource id the extension uses ("widgets.<group>"). */
  readonly resourceId: string;
}

let crd: Promise<WidgetCrd> | undefined;
const namespaces: string[] = [];

/** samples/crd.yaml installed under a group unique to this run (once per run). */
export function widgetCrd(): Promise<WidgetCrd> {
  crd ??= (async () => {
    const doc = parseAllDocuments(readFileSync(join(ROOT, 'samples/crd.yaml'), 'utf8'))[0]!.toJS() as KubeObject;
    const group = `${uniqueName('ext')}.lab.reconcile.dev`;
    const spec = doc.spec as { group: string; names: { plural: string } };
    spec.group = group;
    doc.metadata.name = `widgets.${group}`;
    await installCrd(labCluster().transport, doc);
    return { group, gvr: { group, version: 'v1alpha1', resource: 'widgets' }, apiVersion: `${group}/v1alpha1`, resourceId: `widgets.${group}` };
  })();
  return crd;
}

/** A namespace of the calling suite (deleted at the end of the run). */
export async function testNamespace(prefix: string): Promise<string> {
  const ns = await createNamespace(labCluster().transport, prefix);
  namespaces.push(ns);
  return ns;
}

/** A Widget manifest of the run's CRD. */
export function widget(c: WidgetCrd, namespace: string, name: string, extra: { finalizers?: string[]; data?: Record<string, string> } = {}): KubeObject {
  return {
    apiVersion: c.apiVersion,
    kind: 'Widget',
    metadata: { name, namespace, ...(extra.finalizers ? { finalizers: extra.finalizers } : {}) },
    spec: { data: extra.data ?? { color: 'blue' } },
  };
}

/** The extension's test-only API (it exists only in ExtensionMode.Test, which is how the suite runs it). */
export async function api(): Promise<ReconcileLabApi> {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { publisher: string; name: string };
  const ext = vscode.extensions.getExtension<ReconcileLabApi | undefined>(`${manifest.publisher}.${manifest.name}`);
  if (!ext) throw new Error('the extension is not loaded');
  const exported = await ext.activate();
  if (!exported) throw new Error('the extension exported no test API (it does so only in ExtensionMode.Test)');
  return exported;
}

/** The activated extension's live objects. */
export async function lab(): Promise<ReconcileLab> {
  return (await api()).lab;
}

/**
 * Runs a Reconcile Lab command as the test suite: an object argument gets this activation's argument token, so
 * the arguments that skip confirmations (`confirmed`, `kubeconfig`, `path`, `exportTo`, …) are honoured.
 */
export async function run<T extends object = Record<string, unknown>>(command: string, arg?: unknown): Promise<CommandResult<T>> {
  const withToken = typeof arg === 'object' && arg !== null && !Array.isArray(arg) ? { ...arg, argumentToken: (await api()).argumentToken } : arg;
  return runAsStranger<T>(command, withToken);
}

/** Runs a command as a command link or another extension would: without the argument token. */
export async function runAsStranger<T extends object = Record<string, unknown>>(command: string, arg?: unknown): Promise<CommandResult<T>> {
  return (await vscode.commands.executeCommand(command, arg)) as CommandResult<T>;
}

/** Asserts a command result is ok and returns it narrowed. */
export function ok<T extends object>(r: CommandResult<T>): { ok: true } & T {
  if (!r.ok) throw new Error(`command failed (${r.reason}): ${r.message}`);
  return r;
}

/** Connects the extension to the test cluster, watching only `namespace` and the run's Widget CRD (+ ConfigMaps). */
export async function connectTo(namespace: string, extra: Record<string, unknown> = {}) {
  const c = await widgetCrd();
  return ok(
    await run<{ context: string; server: string; resources: string[]; primaryResource?: string; loop: string; loopProblem?: string }>('reconcileLab.connect', {
      kubeconfig: labCluster().kubeconfigPath,
      namespaces: [namespace],
      resources: [c.resourceId, 'configmaps'],
      reconcilerResource: c.resourceId,
      reconcilerKind: 'lab',
      ...extra,
    }),
  );
}

/** A Widget a suite starts with: its name, and optionally its finalizers and spec data. */
export type WidgetSeed = string | { name: string; finalizers?: string[]; data?: Record<string, string> };

/** What {@link suiteWidgets} set up for a suite. */
export interface SuiteWidgets {
  readonly l: ReconcileLab;
  readonly c: WidgetCrd;
  readonly ns: string;
}

/**
 * The set-up most suites share: the activated extension, the run's Widget CRD, a fresh namespace named after
 * `prefix`, and the `widgets` created in it (in order). With `connect`, the extension is then connected to that
 * namespace and this resolves only once every widget is in its cache, so a suite's first test never races the
 * initial LIST.
 */
export async function suiteWidgets(prefix: string, widgets: readonly WidgetSeed[], opts: { connect?: boolean } = {}): Promise<SuiteWidgets> {
  const l = await lab();
  const c = await widgetCrd();
  const ns = await testNamespace(prefix);
  const { client } = labCluster();
  for (const w of widgets) {
    const { name, ...extra } = typeof w === 'string' ? { name: w } : w;
    await client.create(c.gvr, widget(c, ns, name, extra));
  }
  if (opts.connect) {
    await connectTo(ns);
    await waitUntil(() => l.session?.list(c.resourceId).length === widgets.length, `${widgets.length} widget(s) of ${ns} cached`);
  }
  return { l, c, ns };
}

/** The text of a Resources-tree node's label, as VS Code would render it. */
export function treeLabel(l: ReconcileLab, n: ResourceNode): string {
  const item = l.resourcesTree.getTreeItem(n);
  return typeof item.label === 'string' ? item.label : item.label?.label ?? '';
}

/** A tooltip as the person reads it: a MarkdownString's escapes (`\-`, `&nbsp;`) undone; a string as it is. */
export function tooltipText(tip: string | vscode.MarkdownString | undefined): string {
  if (tip === undefined || typeof tip === 'string') return tip ?? '';
  return tip.value.replace(/&nbsp;/g, ' ').replace(/\\(.)/g, '$1');
}

// Root hook: remove what the suites created, releasing finalizers first so nothing stays Terminating.
after(async function () {
  this.timeout(60_000);
  const l = await lab().catch(() => undefined);
  await l?.disconnect();
  if (!crd) return;
  const c = await crd;
  const { client } = labCluster();
  for (const ns of namespaces) {
    const list = await client.list(c.gvr, ns).catch(() => ({ items: [] as KubeObject[] }));
    for (const w of list.items) {
      if (w.metadata.finalizers?.length) await client.patch(c.gvr, ns, w.metadata.name!, 'merge', { metadata: { finalizers: null } }).catch(() => {});
    }
    await client.delete({ group: '', version: 'v1', resource: 'namespaces' }, undefined, ns).catch(() => {});
  }
  await client.delete({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' }, undefined, `widgets.${c.group}`).catch(() => {});
});

