import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listKubeContexts } from '../../../src/host/connection/kubeContexts.ts';
import { KubeConfigError } from '../../../src/core/k8s/kubeconfig.ts';

const fileA = `apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster: { server: "https://dev.example:6443" }
contexts:
- name: dev
  context: { cluster: dev-cluster, user: dev-user, namespace: team-a }
users:
- name: dev-user
  user: { token: not-a-real-token }
`;
const fileB = `apiVersion: v1
kind: Config
clusters:
- name: prod-cluster
  cluster: { server: "https://prod.example:6443" }
contexts:
- name: prod
  context: { cluster: prod-cluster, user: sso }
users:
- name: sso
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: kubelogin
      args: [get-token]
`;

describe('listKubeContexts', () => {
  let dir = '';
  let saved: string | undefined;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rl-kc-'));
    writeFileSync(join(dir, 'a'), fileA);
    writeFileSync(join(dir, 'b'), fileB);
    writeFileSync(join(dir, 'bad'), 'clusters: [ this is : not yaml');
    saved = process.env.KUBECONFIG;
  });
  after(() => {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists one file with its current context, server and namespace', () => {
    const list = listKubeContexts(join(dir, 'a'));
    assert.deepEqual(list, [{ name: 'dev', cluster: 'dev-cluster', server: 'https://dev.example:6443', user: 'dev-user', namespace: 'team-a', current: true }]);
  });

  it('merges the files of KUBECONFIG as kubectl does and flags exec credential plugins', () => {
    process.env.KUBECONFIG = [join(dir, 'a'), join(dir, 'b')].join(':');
    const list = listKubeContexts(undefined);
    assert.deepEqual(list.map((c) => c.name), ['dev', 'prod']);
    assert.equal(list.find((c) => c.current)?.name, 'dev');
    assert.equal(list.find((c) => c.name === 'prod')?.execCommand, 'kubelogin');
  });

  it('throws a KubeConfigError naming the file when it cannot be read', () => {
    assert.throws(() => listKubeContexts(join(dir, 'missing')), (e: unknown) => e instanceof KubeConfigError && e.message.includes('missing'));
    assert.throws(() => listKubeContexts(join(dir, 'bad')), KubeConfigError);
  });
});
