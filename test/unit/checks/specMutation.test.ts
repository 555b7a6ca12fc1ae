import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveSpecMutation, mergeParts, mutateScalar, specSchemaOf, MAX_MUTATED_FIELDS, type OpenApiSchema } from '../../../src/core/checks/specMutation.ts';
import type { KubeObject } from '../../../src/core/k8s/objects.ts';

const obj = (spec: unknown): KubeObject => ({ apiVersion: 'ops.example.org/v1', kind: 'Backup', metadata: { name: 'b', namespace: 'ns' }, spec } as KubeObject);

test('mutateScalar: enum → its next value, bounds honoured, booleans flipped; no safe value → undefined', () => {
  assert.equal(mutateScalar({ type: 'string', enum: ['Daily', 'Weekly', 'Monthly'] }, 'Weekly'), 'Monthly');
  assert.equal(mutateScalar({ type: 'string', enum: ['Daily', 'Weekly'] }, 'Weekly'), 'Daily', 'wraps around');
  assert.equal(mutateScalar({ type: 'string', enum: ['Only'] }, 'Only'), undefined, 'one value: nothing else is valid');
  assert.equal(mutateScalar({ type: 'integer', minimum: 1, maximum: 10 }, 3), 4);
  assert.equal(mutateScalar({ type: 'integer', minimum: 1, maximum: 10 }, 10), 9, 'at the maximum: one down');
  assert.equal(mutateScalar({ type: 'integer', minimum: 5, maximum: 5 }, 5), undefined);
  assert.equal(mutateScalar({ type: 'integer', maximum: 4, exclusiveMaximum: true }, 3), 2);
  assert.equal(mutateScalar({ type: 'number' }, 0.5), 0.75);
  assert.equal(mutateScalar({ type: 'boolean' }, false), true);
  assert.equal(mutateScalar({ type: 'string' }, 'hello'), 'hello-changed');
  assert.equal(mutateScalar({ type: 'string', maxLength: 5 }, 'hello'), 'hellx', 'same length, last character changed');
  assert.equal(mutateScalar({ type: 'string', pattern: '^[a-z]+$' }, 'abc'), undefined, 'a pattern: a valid value cannot be told');
  assert.equal(mutateScalar({ type: 'string', format: 'date-time' }, '2026-01-01T00:00:00Z'), undefined);
  assert.equal(mutateScalar({ 'x-kubernetes-int-or-string': true }, 3), undefined);
  assert.equal(mutateScalar({ type: 'integer' }, 'not a number'), undefined, 'a value of another type is left alone');
});

test('deriveSpecMutation: scalar leaves the object sets, nested objects and string maps walked in sorted order, at most three (an enum, a boolean, a number before free text), one merge patch', () => {
  const schema: OpenApiSchema = {
    type: 'object',
    properties: {
      schedule: { type: 'string', enum: ['Daily', 'Weekly'] },
      retention: { type: 'object', properties: { days: { type: 'integer', minimum: 1, maximum: 30 }, keepLast: { type: 'integer' } } },
      targets: { type: 'array', items: { type: 'string' } },
      paused: { type: 'boolean' },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      unset: { type: 'string' },
    },
  };
  const m = deriveSpecMutation(schema, obj({ schedule: 'Daily', retention: { days: 7 }, targets: ['a'], paused: false, labels: { tier: 'gold' } }));
  assert.ok('patch' in m);
  // Sorted: labels, paused, retention, schedule, targets, unset; four could change, three are taken: the enum
  // (schedule), the boolean (paused) and the number (retention.days) before the free string labels.tier. The string
  // map also gets a key added (listed first, not counted). Listed in sorted order.
  assert.deepEqual(m.fields, ['spec.labels.reconcile-lab-added (added)', 'spec.paused', 'spec.retention.days', 'spec.schedule']);
  assert.equal(m.fields.length, MAX_MUTATED_FIELDS + 1);
  assert.deepEqual(m.patch, { spec: { labels: { 'reconcile-lab-added': 'added' }, paused: true, retention: { days: 8 }, schedule: 'Weekly' } });
  // Each field also as a patch of its own, in the same order (tried one by one when the server refuses them together).
  assert.deepEqual(m.parts, [
    { field: 'spec.labels.reconcile-lab-added (added)', patch: { spec: { labels: { 'reconcile-lab-added': 'added' } } } },
    { field: 'spec.paused', patch: { spec: { paused: true } } },
    { field: 'spec.retention.days', patch: { spec: { retention: { days: 8 } } } },
    { field: 'spec.schedule', patch: { spec: { schedule: 'Weekly' } } },
  ]);
  // With fewer than four candidates every one is taken, free strings too.
  const few = deriveSpecMutation(schema, obj({ schedule: 'Daily', labels: { tier: 'gold' } }));
  assert.ok('fields' in few && few.fields.join() === 'spec.labels.reconcile-lab-added (added),spec.labels.tier,spec.schedule', JSON.stringify(few));
  // The same input, the same change.
  assert.deepEqual(deriveSpecMutation(schema, obj({ schedule: 'Daily', retention: { days: 7 }, targets: ['a'], paused: false, labels: { tier: 'gold' } })), m);
});

test('deriveSpecMutation: nothing mutable, no schema, no spec → skipped with the reason, never a failure', () => {
  const arraysOnly: OpenApiSchema = { type: 'object', properties: { targets: { type: 'array', items: { type: 'string' } }, id: { type: 'string', pattern: '^[0-9]+$' } } };
  const r = deriveSpecMutation(arraysOnly, obj({ targets: ['a'], id: '12' }));
  assert.ok('skipped' in r && /no spec field the schema lets us change/.test(r.skipped));
  const open = deriveSpecMutation({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, obj({ anything: 'x' }));
  assert.ok('skipped' in open, 'a tree without properties is not guessed at');
  assert.deepEqual(deriveSpecMutation(undefined, obj({ a: 1 })), { skipped: 'the resource publishes no schema for spec' });
  assert.deepEqual(deriveSpecMutation(arraysOnly, obj(undefined)), { skipped: 'the object has no spec' });
});

test('specSchemaOf: the served version\'s schema of spec from a CustomResourceDefinition', () => {
  const crd = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'backups.ops.example.org' }, spec: { versions: [
    { name: 'v1alpha1', schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { old: { type: 'string' } } } } } } },
    { name: 'v1', schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { schedule: { type: 'string' } } } } } } },
  ] } } as unknown as KubeObject;
  assert.deepEqual(Object.keys(specSchemaOf(crd, 'v1')!.properties!), ['schedule']);
  assert.equal(specSchemaOf(crd, 'v2'), undefined);
});

test('deriveSpecMutation: references to Secrets and ConfigMaps are never renamed (both runs would only wait for an object that does not exist)', () => {
  const str = { type: 'string' } as const;
  const schema: OpenApiSchema = { type: 'object', properties: {
    credentials: { type: 'object', properties: { secretRef: { type: 'object', properties: { name: str, key: str, namespace: str } } } },
    tlsSecretName: str,
    settingsConfigMapName: str,
    replicas: { type: 'integer', minimum: 1 },
    owner: { type: 'object', properties: { name: str } },
  } };
  const m = deriveSpecMutation(schema, obj({ credentials: { secretRef: { name: 'db', key: 'pw', namespace: 'ns' } }, tlsSecretName: 'tls', settingsConfigMapName: 'settings', replicas: 2, owner: { name: 'team-a' } }));
  assert.deepEqual(m, { patch: { spec: { owner: { name: 'team-a-changed' }, replicas: 3 } }, fields: ['spec.owner.name', 'spec.replicas'], parts: [{ field: 'spec.owner.name', patch: { spec: { owner: { name: 'team-a-changed' } } } }, { field: 'spec.replicas', patch: { spec: { replicas: 3 } } }] }, 'a bare name that is no reference is still changed');
  const onlyRefs = deriveSpecMutation(schema, obj({ credentials: { secretRef: { name: 'db', key: 'pw' } }, tlsSecretName: 'tls' }));
  assert.ok('skipped' in onlyRefs, JSON.stringify(onlyRefs));
});

test('deriveSpecMutation: a field naming a namespace is never changed (another valid namespace cannot be told; a cluster-scoped copy\'s is redirected anyway)', () => {
  const str = { type: 'string' } as const;
  const schema: OpenApiSchema = { type: 'object', properties: { namespace: str, targetNamespace: str, berths: { type: 'integer' }, namespaced: { type: 'boolean' } } };
  const m = deriveSpecMutation(schema, obj({ namespace: 'port', targetNamespace: 'docks', berths: 12, namespaced: true }));
  assert.deepEqual(m, { patch: { spec: { berths: 13, namespaced: false } }, fields: ['spec.berths', 'spec.namespaced'], parts: [{ field: 'spec.berths', patch: { spec: { berths: 13 } } }, { field: 'spec.namespaced', patch: { spec: { namespaced: false } } }] });
  assert.ok('skipped' in deriveSpecMutation(schema, obj({ namespace: 'port' })));
});

test('deriveSpecMutation: one key is added to the first string map that takes one — not to a selector, a full map (maxProperties) or one whose values have a pattern', () => {
  const str = { type: 'string' } as const;
  const map = (extra: Partial<OpenApiSchema> = {}, values: OpenApiSchema = str): OpenApiSchema => ({ type: 'object', additionalProperties: values, ...extra });
  // Each refused map sorts before `env`, which takes the key instead.
  const refused: Array<[string, OpenApiSchema, unknown]> = [
    ['aSelector', { type: 'object', properties: { matchLabels: map() } }, { matchLabels: { app: 'x' } }],
    ['aNodeSelector', map(), { zone: 'a' }],
    ['aFull', map({ maxProperties: 1 }), { only: 'one' }],
    ['aPatterned', map({}, { type: 'string', pattern: '^[a-z]+$' }), { k: 'v' }],
    ['aHasIt', map(), { 'reconcile-lab-added': 'added' }],
  ];
  for (const [name, schema, value] of refused) {
    const m = deriveSpecMutation({ type: 'object', properties: { [name]: schema, env: map(), more: map() } }, obj({ [name]: value, env: { LOG: 'info' }, more: { x: 'y' } }));
    assert.ok('patch' in m, JSON.stringify(m));
    assert.deepEqual(m.fields.filter((f) => f.endsWith(' (added)')), ['spec.env.reconcile-lab-added (added)'], `${name}: ${JSON.stringify(m.fields)}`);
    assert.equal((m.patch.spec.env as Record<string, string>)['reconcile-lab-added'], 'added');
    assert.equal((m.patch.spec.more as Record<string, string> | undefined)?.['reconcile-lab-added'], undefined, 'one added key at most');
  }
});

test('mergeParts: the parts\' merge patches deep-merged into one new object; a subset of parts merges only those', () => {
  const parts = [
    { field: 'spec.a.x', patch: { spec: { a: { x: 2 } } } },
    { field: 'spec.a.y', patch: { spec: { a: { y: 'n' } } } },
    { field: 'spec.labels (added)', patch: { spec: { labels: { k: 'v' } } } },
  ];
  const all = mergeParts(parts);
  assert.deepEqual(all, { spec: { a: { x: 2, y: 'n' }, labels: { k: 'v' } } });
  (all.spec as { a: { x: number } }).a.x = 99;
  assert.equal((parts[0]!.patch.spec as { a: { x: number } }).a.x, 2, 'the parts are not mutated through the result');
  assert.deepEqual(mergeParts([parts[1]!]), { spec: { a: { y: 'n' } } });
  assert.deepEqual(mergeParts([]), {});
});

test('deriveSpecMutation: a reference to an object of any kind (a key ending in Ref or Refs) is left alone, and does not take the place of an enum', () => {
  const str = { type: 'string' } as const;
  const ref: OpenApiSchema = { type: 'object', properties: { name: str, kind: str } };
  const schema: OpenApiSchema = { type: 'object', properties: {
    credentialsRef: ref, issuerRef: ref, sourceRefs: { type: 'array', items: ref }, ownerRef: str,
    limit: { type: 'integer', minimum: 1, maximum: 100 }, note: str, region: str, tier: { type: 'string', enum: ['bronze', 'silver', 'gold'] },
  } };
  const m = deriveSpecMutation(schema, obj({ credentialsRef: { name: 'acme-creds' }, issuerRef: { name: 'ca', kind: 'Issuer' }, sourceRefs: [{ name: 'repo' }], ownerRef: 'team', limit: 10, note: 'n', region: 'eu', tier: 'silver' }));
  assert.ok('fields' in m, JSON.stringify(m));
  assert.deepEqual(m.fields, ['spec.limit', 'spec.note', 'spec.tier']);
  assert.deepEqual(m.patch, { spec: { limit: 11, note: 'n-changed', tier: 'gold' } });
  assert.ok('skipped' in deriveSpecMutation(schema, obj({ credentialsRef: { name: 'acme-creds' }, ownerRef: 'team' })), 'references only: nothing to change');
});
