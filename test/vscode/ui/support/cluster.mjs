// What the UI tests set up in the test cluster and the workspace before they open the workbench: a client for the
// cluster, the sample Widget CRD (samples/crd.yaml) established, a namespace of the test's own, and the workspace
// settings the extension reads on start.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { eventually } from './workbench.mjs';

export const GROUP = 'lab.reconcile.dev';
export const VERSION = 'v1alpha1';

/** The project's own transport (src/core/k8s) on the test cluster's kubeconfig (`t.kubeconfig`). */
export async function clusterClient(t) {
  const { loadKubeConfig } = await import(pathToFileURL(join(t.root, 'src/core/k8s/kubeconfig.ts')).href);
  const { KubeTransport } = await import(pathToFileURL(join(t.root, 'src/core/k8s/transport.ts')).href);
  return new KubeTransport(loadKubeConfig({ path: t.kubeconfig }));
}

/**
 * Creates the Widget CRD unless it exists (other test files share the cluster), waits until it is Established, and
 * creates the namespace `ns` (which must not exist yet).
 */
export async function widgetCrdAndNamespace(t, kube, ns) {
  const crd = parseAllDocuments(readFileSync(join(t.root, 'samples/crd.yaml'), 'utf8')).map((d) => d.toJSON()).find((o) => o?.kind === 'CustomResourceDefinition');
  try {
    await kube.json({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd });
  } catch (e) {
    if (e.code !== 409) throw e;
  }
  await eventually('the Widget CRD to be established', () => kube.json({ method: 'GET', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}` }),
    (c) => (c.status?.conditions ?? []).some((x) => x.type === 'Established' && x.status === 'True'));
  await kube.json({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
}

/** Creates the Widget `name` in `ns` with `spec`. */
export function createWidget(kube, ns, name, spec) {
  return kube.json({
    method: 'POST', path: `/apis/${GROUP}/${VERSION}/namespaces/${ns}/widgets`,
    body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Widget', metadata: { name, namespace: ns }, spec },
  });
}

/** Writes the workspace's .vscode/settings.json (replacing it): the settings the extension starts with. */
export function writeWorkspaceSettings(t, settings) {
  mkdirSync(join(t.workspace, '.vscode'), { recursive: true });
  writeFileSync(join(t.workspace, '.vscode/settings.json'), JSON.stringify(settings, null, 2));
}
