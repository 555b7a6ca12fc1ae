// Shared setup for the reconcilers / actions / CLI integration suites (not a test file itself).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject, GroupVersionResource } from '../../src/core/k8s/objects.ts';
import type { KubeTransport } from '../../src/core/k8s/transport.ts';
import { createDynamicClient, type DynamicKubeClient } from '../../src/core/k8s/dynamicClient.ts';
import { installCrd, uniqueName } from './support/cluster.ts';

export const ROOT = join(import.meta.dirname, '..', '..');

/** Every document of a YAML file under samples/. */
export function sampleDocs(file: string): KubeObject[] {
  return parseAllDocuments(readFileSync(join(ROOT, 'samples', file), 'utf8'))
    .map((d) => d.toJS() as KubeObject | null)
    .filter((d): d is KubeObject => !!d);
}

export interface LabCrd {
  group: string;
  gvr: GroupVersionResource;
  apiVersion: string;
}

/**
 * Installs samples/crd.yaml under a group unique to this run (CRD names are cluster-wide), so the real
 * schema, status subresource and printer columns are exercised without colliding with other suites.
 */
export async function installLabCrd(t: KubeTransport): Promise<LabCrd> {
  const crd = sampleDocs('crd.yaml')[0]!;
  const group = `${uniqueName('t')}.lab.reconcile.dev`;
  const spec = crd.spec as { group: string; names: { plural: string } };
  spec.group = group;
  crd.metadata.name = `${spec.names.plural}.${group}`;
  await installCrd(t, crd);
  return { group, gvr: { group, version: 'v1alpha1', resource: 'widgets' }, apiVersion: `${group}/v1alpha1` };
}

/** The sample Widgets (samples/widgets.yaml) retargeted at `crd` and `namespace`. */
export function sampleWidgets(crd: LabCrd, namespace: string): KubeObject[] {
  return sampleDocs('widgets.yaml')
    .filter((d) => d.kind === 'Widget')
    .map((w) => ({ ...w, apiVersion: crd.apiVersion, metadata: { ...w.metadata, namespace } }));
}

export const CONFIGMAPS: GroupVersionResource = { group: '', version: 'v1', resource: 'configmaps' };

export function client(t: KubeTransport): DynamicKubeClient {
  return createDynamicClient(t, { fieldManager: 'reconcile-lab-test' });
}
