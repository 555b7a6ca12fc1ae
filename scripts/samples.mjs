// Creating the lab's sample objects (samples/*.yaml) on a cluster: used by `npm run lab` (scripts/lab.mjs) and by the
// integration test that checks what the finalizer diagnosis says about them.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

/**
 * The field manager of every object the lab creates from samples/. It is NOT the extension's own "reconcile-lab":
 * the finalizer diagnosis reads managedFields to name who set a finalizer, and a sample manifest is not the loop.
 */
export const SAMPLES_FIELD_MANAGER = 'reconcile-lab-samples';

/** The non-empty YAML documents of a file, as plain objects. */
export function loadDocuments(file) {
  return parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJSON()).filter(Boolean);
}

/**
 * Creates every document, in order, with {@link SAMPLES_FIELD_MANAGER} (a 409 AlreadyExists is fine: the lab is
 * re-runnable); waits for a CRD to be established before going on.
 * @param {import('../src/core/k8s/transport.ts').KubeTransport} t
 * @param {object[]} docs
 * @param {{ log?: (line: string) => void }} [o]
 */
export async function applyDocuments(t, docs, o = {}) {
  const log = o.log ?? (() => {});
  for (const obj of docs) {
    const path = await collectionPath(t, obj);
    try {
      await t.json({ method: 'POST', path, body: obj, query: { fieldManager: SAMPLES_FIELD_MANAGER } });
      log(`created ${obj.kind} ${obj.metadata.namespace ? obj.metadata.namespace + '/' : ''}${obj.metadata.name}`);
    } catch (e) {
      if (e.code !== 409) throw e;
    }
    if (obj.kind === 'CustomResourceDefinition') await waitEstablished(t, obj.metadata.name);
  }
}

async function collectionPath(t, obj) {
  const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
  const ns = obj.metadata.namespace;
  if (!group) {
    const plural = { Namespace: 'namespaces', ConfigMap: 'configmaps', Secret: 'secrets' }[obj.kind];
    if (!plural) throw new Error(`lab: no path for ${obj.kind}`);
    return ns ? `/api/${version}/namespaces/${ns}/${plural}` : `/api/${version}/${plural}`;
  }
  if (obj.kind === 'CustomResourceDefinition') return `/apis/${group}/${version}/customresourcedefinitions`;
  // A custom resource: find its plural through discovery of its group version.
  const rl = await t.json({ method: 'GET', path: `/apis/${group}/${version}` });
  const r = rl.resources.find((x) => x.kind === obj.kind && !x.name.includes('/'));
  if (!r) throw new Error(`lab: ${obj.kind} is not served by ${group}/${version}`);
  return ns && r.namespaced ? `/apis/${group}/${version}/namespaces/${ns}/${r.name}` : `/apis/${group}/${version}/${r.name}`;
}

async function waitEstablished(t, name) {
  for (let i = 0; i < 300; i++) {
    const crd = await t.json({ method: 'GET', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}` });
    if ((crd.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True')) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`CRD ${name} was not established`);
}
