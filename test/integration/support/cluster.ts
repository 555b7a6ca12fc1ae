import { randomBytes } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from '../../../src/core/k8s/kubeconfig.ts';
import { KubeTransport } from '../../../src/core/k8s/transport.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';
import { startLocalControlPlane, type LocalControlPlane } from '../../../src/core/controlplane/localControlPlane.ts';

/**
 * The real cluster integration tests talk to. `npm test` starts one local
 * control plane for the whole run and passes its kubeconfig in
 * RECONCILE_LAB_KUBECONFIG; a test file run on its own starts a private one,
 * stopped when the process exits.
 *
 * Tests share the cluster: each must use its own namespaces (createNamespace)
 * and its own CRD group/plural (CRD names are cluster-wide).
 */
export interface TestCluster {
  readonly kubeconfigPath: string;
  readonly kubeConfig: KubeConfig;
  readonly transport: KubeTransport;
  /** Set when this process started the control plane itself (then tests may restart kube-apiserver). */
  readonly controlPlane?: LocalControlPlane;
}

let shared: Promise<TestCluster> | undefined;

export function getTestCluster(): Promise<TestCluster> {
  shared ??= (async () => {
    const fromEnv = process.env.RECONCILE_LAB_KUBECONFIG;
    if (fromEnv) return fromKubeconfig(fromEnv);
    const cp = await startLocalControlPlane();
    process.once('beforeExit', () => void cp.stop());
    return { ...fromKubeconfig(cp.kubeconfigPath), controlPlane: cp };
  })();
  return shared;
}

/** A control plane of the caller's own (for tests that stop kube-apiserver); the caller must stop() it. */
export async function startPrivateCluster(): Promise<TestCluster & { controlPlane: LocalControlPlane }> {
  const cp = await startLocalControlPlane({ controllerManager: false });
  return { ...fromKubeconfig(cp.kubeconfigPath), controlPlane: cp };
}

function fromKubeconfig(path: string): TestCluster {
  const kubeConfig = loadKubeConfig({ path });
  return { kubeconfigPath: path, kubeConfig, transport: new KubeTransport(kubeConfig) };
}

/** A DNS-1123 name unique to this run: `<prefix>-<8 hex>`. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** Creates a namespace with a unique name and returns the name. */
export async function createNamespace(t: KubeTransport, prefix = 'it'): Promise<string> {
  const name = uniqueName(prefix);
  await t.json({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  return name;
}

export interface TestCrdOptions {
  group: string;
  kind: string;
  plural: string;
  scope?: 'Namespaced' | 'Cluster';
  version?: string;
}

/** A permissive CRD (any spec/status fields) with the status subresource. */
export function testCrd(o: TestCrdOptions): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${o.plural}.${o.group}` },
    spec: {
      group: o.group,
      scope: o.scope ?? 'Namespaced',
      names: { kind: o.kind, plural: o.plural, singular: o.kind.toLowerCase(), listKind: `${o.kind}List` },
      versions: [{
        name: o.version ?? 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      }],
    },
  };
}

/** Creates (or keeps) a CRD and waits until it is Established and its REST path answers. */
export async function installCrd(t: KubeTransport, crd: KubeObject): Promise<void> {
  try {
    await t.json({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd });
  } catch (e) {
    if ((e as { code?: number }).code !== 409) throw e;
  }
  const spec = crd.spec as { group: string; names: { plural: string }; versions: Array<{ name: string }> };
  await waitUntil(async () => {
    const got = await t.json<KubeObject>({ method: 'GET', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}` });
    const conds = (got.status as { conditions?: Array<{ type: string; status: string }> } | undefined)?.conditions ?? [];
    return conds.some((c) => c.type === 'Established' && c.status === 'True');
  }, `CRD ${crd.metadata.name} established`);
  await waitUntil(async () => {
    try {
      await t.json({ method: 'GET', path: `/apis/${spec.group}/${spec.versions[0]!.name}/${spec.names.plural}` });
      return true;
    } catch {
      return false;
    }
  }, `${spec.names.plural}.${spec.group} served`);
}

/**
 * Polls `cond` until it returns true (bounded: `timeoutMs`, default 30 s). This waits for a real server to converge;
 * it is not a timing assertion (the bound only keeps a broken run from hanging).
 */
export async function waitUntil(cond: () => Promise<boolean> | boolean, what: string, timeoutMs = 30_000, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await cond()) return;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
