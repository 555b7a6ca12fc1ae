import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCopySpec, referencesNote, specReferences, withExtraReferences, type CopiedReference } from '../../../src/core/checks/references.ts';

const names = (spec: unknown) => specReferences({ spec }).map((r) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name} @ ${r.path}`);

test('specReferences: the usual Kubernetes reference shapes, at any depth of spec', () => {
  const spec = {
    credentials: { secretRef: { name: 'db-creds' } },
    settings: { configMapRef: { name: 'app-settings' } },
    tls: { tlsSecretName: 'orders-tls', caConfigMapName: 'orders-ca' },
    secretName: 'top-level',
    configMapName: 'top-level-cm',
    backup: { storage: { accessKeySecretRef: { name: 'bucket-keys', key: 'id' } } },
    template: {
      spec: {
        imagePullSecrets: [{ name: 'registry-pull' }],
        volumes: [
          { name: 'vol-secret', secret: { secretName: 'mounted-secret' } },
          { name: 'vol-cm', configMap: { name: 'mounted-cm' } },
          { name: 'vol-projected', projected: { sources: [{ secret: { name: 'proj-secret' } }, { configMap: { name: 'proj-cm' } }] } },
        ],
        containers: [{
          name: 'app',
          envFrom: [{ configMapRef: { name: 'env-cm' } }, { secretRef: { name: 'env-secret' } }],
          env: [
            { name: 'PASSWORD', valueFrom: { secretKeyRef: { name: 'pw', key: 'password' } } },
            { name: 'MODE', valueFrom: { configMapKeyRef: { name: 'modes', key: 'mode' } } },
          ],
        }],
      },
    },
    dependsOn: [{ kind: 'ConfigMap', name: 'lab-dep' }, { kind: 'Service', name: 'not-a-secret' }],
  };
  assert.deepEqual(names(spec), [
    'Secret db-creds @ spec.credentials.secretRef.name',
    'ConfigMap app-settings @ spec.settings.configMapRef.name',
    'Secret orders-tls @ spec.tls.tlsSecretName',
    'ConfigMap orders-ca @ spec.tls.caConfigMapName',
    'Secret top-level @ spec.secretName',
    'ConfigMap top-level-cm @ spec.configMapName',
    'Secret bucket-keys @ spec.backup.storage.accessKeySecretRef.name',
    'Secret registry-pull @ spec.template.spec.imagePullSecrets[0].name',
    'Secret mounted-secret @ spec.template.spec.volumes[0].secret.secretName',
    'ConfigMap mounted-cm @ spec.template.spec.volumes[1].configMap.name',
    'Secret proj-secret @ spec.template.spec.volumes[2].projected.sources[0].secret.name',
    'ConfigMap proj-cm @ spec.template.spec.volumes[2].projected.sources[1].configMap.name',
    'ConfigMap env-cm @ spec.template.spec.containers[0].envFrom[0].configMapRef.name',
    'Secret env-secret @ spec.template.spec.containers[0].envFrom[1].secretRef.name',
    'Secret pw @ spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name',
    'ConfigMap modes @ spec.template.spec.containers[0].env[1].valueFrom.configMapKeyRef.name',
    'ConfigMap lab-dep @ spec.dependsOn[0].name',
  ]);
});

test('specReferences: arbitrary name fields, metadata and status are not references', () => {
  assert.deepEqual(names({ name: 'x', owner: { name: 'y' }, containers: [{ name: 'app', image: 'nginx' }], service: { name: 'svc' }, secrets: 'no', secretKey: 'k', secretData: { name: 'z' } }), []);
  assert.deepEqual(specReferences({ spec: undefined }), []);
  assert.deepEqual(specReferences({ metadata: { name: 'm' }, status: { secretRef: { name: 'in-status' } } } as never), [], 'only spec is read');
});

test('specReferences: the namespace next to the name is kept; names that cannot be object names are skipped; duplicates once', () => {
  assert.deepEqual(specReferences({ spec: {
    a: { secretRef: { name: 'remote', namespace: 'vault' } },
    b: { secretName: 'remote-too', secretNamespace: 'certs' },
    c: { caSecretName: 'ca', caSecretNamespace: 'pki' },
    d: { secretName: 'same', namespace: 'shop' },
    e: { secretRef: { name: '{{ .Values.secret }}' } },
    f: { configMapName: '' },
    g: { secretRef: 'plain-string' },
    h: { extraSecretRefs: [{ name: 'one' }, 'two'] },
    i: [{ secretRef: { name: 'one' } }],
    j: { secretName: 42 },
  } }), [
    { kind: 'Secret', name: 'remote', namespace: 'vault', path: 'spec.a.secretRef.name' },
    { kind: 'Secret', name: 'remote-too', namespace: 'certs', path: 'spec.b.secretName' },
    { kind: 'Secret', name: 'ca', namespace: 'pki', path: 'spec.c.caSecretName' },
    { kind: 'Secret', name: 'same', namespace: 'shop', path: 'spec.d.secretName' },
    { kind: 'Secret', name: 'plain-string', path: 'spec.g.secretRef' },
    { kind: 'Secret', name: 'one', path: 'spec.h.extraSecretRefs[0].name' },
    { kind: 'Secret', name: 'two', path: 'spec.h.extraSecretRefs[1]' },
  ]);
});

test('specReferences: a pathological spec is bounded (depth and count)', () => {
  let deep: Record<string, unknown> = { secretName: 'too-deep' };
  for (let i = 0; i < 200; i++) deep = { x: deep };
  assert.deepEqual(specReferences({ spec: deep }), []);
  const many = Array.from({ length: 500 }, (_, i) => ({ secretName: `s-${i}` }));
  assert.equal(specReferences({ spec: { many } }).length, 100);
});

test('referencesNote: names what was copied and what was not (and why), never a value; nothing when the spec refers to nothing', () => {
  assert.equal(referencesNote('shop/orders', []), undefined);
  const refs: CopiedReference[] = [
    { kind: 'Secret', name: 'orders-creds', path: 'spec.credentials.secretRef.name', outcome: 'copied' },
    { kind: 'ConfigMap', name: 'orders-settings', path: 'spec.settingsConfigMapName', outcome: 'copied' },
    { kind: 'Secret', name: 'gone', path: 'spec.secretName', outcome: 'missing' },
    { kind: 'Secret', name: 'remote', namespace: 'vault', path: 'spec.a.secretRef.name', outcome: 'otherNamespace' },
    { kind: 'Secret', name: 'orders-tls', path: 'spec.tlsSecretName', outcome: 'owned' },
    { kind: 'ConfigMap', name: 'kube-root-ca.crt', path: 'spec.caConfigMapRef.name', outcome: 'present' },
    { kind: 'Secret', name: 'odd', path: 'spec.b.secretRef.name', outcome: 'failed', error: '422 Invalid' },
  ];
  assert.equal(referencesNote('shop/orders', refs),
    'Objects the spec of shop/orders refers to — copied into every scratch namespace of shop/orders (each run its own copies, deleted with the namespace; Secrets copied server side, values never shown): Secret orders-creds (spec.credentials.secretRef.name), ConfigMap orders-settings (spec.settingsConfigMapName); '
    + 'not found in the object\'s namespace, so missing in the copies too: Secret gone (spec.secretName); '
    + 'in another namespace, not copied (the checks copy only from the object\'s own namespace; a controller that reads them reads your real objects or, confined to its scratch namespace, fails): Secret vault/remote (spec.a.secretRef.name); '
    + 'not copied, owned by shop/orders itself (children its controller makes, so each run makes its own): Secret orders-tls (spec.tlsSecretName); '
    + 'not copied, the cluster makes its own in every namespace: ConfigMap kube-root-ca.crt (spec.caConfigMapRef.name); '
    + 'could not be copied (missing in the copies): Secret odd (spec.b.secretRef.name: 422 Invalid).');
});

test('parseCopySpec: kind/name as kubectl names the kind (secret, secrets, configmap, configmaps, cm; any case); anything else is a clear error', () => {
  assert.deepEqual(parseCopySpec('secret/db-creds'), { kind: 'Secret', name: 'db-creds' });
  assert.deepEqual(parseCopySpec(' Secrets/db.creds '), { kind: 'Secret', name: 'db.creds' });
  assert.deepEqual(parseCopySpec('ConfigMap/app-settings'), { kind: 'ConfigMap', name: 'app-settings' });
  assert.deepEqual(parseCopySpec('cm/x1'), { kind: 'ConfigMap', name: 'x1' });
  assert.throws(() => parseCopySpec('db-creds'), /"db-creds" is not kind\/name: secret\/<name> or configmap\/<name>/);
  assert.throws(() => parseCopySpec('deployment/web'), /only Secrets and ConfigMaps are copied .*not deployment/);
  assert.throws(() => parseCopySpec('secret/DB_Creds'), /"DB_Creds" is not a valid Secret name/);
  assert.throws(() => parseCopySpec('secret/other-ns/db'), /"other-ns\/db" is not a valid Secret name.*another namespace is never copied/);
});

test('withExtraReferences: the named ones after those the spec makes, each (kind, namespace, name) once', () => {
  const found = specReferences({ spec: { credentials: { secretRef: { name: 'db-creds' } } } });
  const out = withExtraReferences(found, [
    { kind: 'Secret', name: 'db-creds', path: '--copy' },
    { kind: 'ConfigMap', name: 'db-creds', path: '--copy' },
    { kind: 'Secret', name: 'vault', path: '--copy' },
  ]);
  assert.deepEqual(out.map((r) => `${r.kind} ${r.name} @ ${r.path}`), ['Secret db-creds @ spec.credentials.secretRef.name', 'ConfigMap db-creds @ --copy', 'Secret vault @ --copy']);
  const note = referencesNote('ns/a', out.map((r) => ({ ...r, outcome: 'copied' as const })))!;
  assert.match(note, /^Objects the spec of ns\/a refers to or that you named to copy — copied into every scratch namespace .*: Secret db-creds \(spec\.credentials\.secretRef\.name\), ConfigMap db-creds \(--copy\), Secret vault \(--copy\)\.$/);
  assert.match(referencesNote('ns/a', found.map((r) => ({ ...r, outcome: 'copied' as const })))!, /^Objects the spec of ns\/a refers to — /, 'no named one: as before');
});

test('specReferences: another key ending in Ref or Refs names a Secret or a ConfigMap (guessed: both kinds) unless its kind says otherwise', () => {
  const spec = {
    credentialsRef: { name: 'acme-creds' },
    databaseRefs: ['db-a', { name: 'db-b', namespace: 'data' }],
    issuerRef: { name: 'letsencrypt', kind: 'ClusterIssuer' },
    tokenRef: { name: 'token', kind: 'Secret' },
    secretRef: { name: 'plain' },
  };
  const refs = specReferences({ spec });
  assert.deepEqual(refs.map((r) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name} @ ${r.path}${r.guessed ? ' (guessed)' : ''}`), [
    'Secret acme-creds @ spec.credentialsRef.name (guessed)',
    'ConfigMap acme-creds @ spec.credentialsRef.name (guessed)',
    'Secret db-a @ spec.databaseRefs[0] (guessed)',
    'ConfigMap db-a @ spec.databaseRefs[0] (guessed)',
    'Secret data/db-b @ spec.databaseRefs[1].name (guessed)',
    'ConfigMap data/db-b @ spec.databaseRefs[1].name (guessed)',
    'Secret token @ spec.tokenRef.name',
    'Secret plain @ spec.secretRef.name',
  ]);
});
