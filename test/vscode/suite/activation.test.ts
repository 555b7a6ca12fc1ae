// The extension activates inside a real VS Code extension host and registers every command its manifest contributes.
// The expected ids are read from package.json on disk, so this test follows the manifest as it grows.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';

interface Manifest {
  name: string;
  publisher: string;
  version: string;
  contributes?: {
    commands?: { command: string }[];
    menus?: Record<string, { command?: string; submenu?: string }[]>;
    viewsWelcome?: { view: string; contents: string }[];
    views?: Record<string, { id: string }[]>;
  };
}

// dist/test/suite.js → repository root.
const manifest = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as Manifest;
const extensionId = `${manifest.publisher}.${manifest.name}`;
const contributedCommands = (manifest.contributes?.commands ?? []).map((c) => c.command);

async function activated(): Promise<vscode.Extension<unknown>> {
  const ext = vscode.extensions.getExtension(extensionId);
  assert.ok(ext, `extension ${extensionId} is not loaded in the extension host`);
  await ext.activate(); // rejects with the error when activate() throws
  assert.equal(ext.isActive, true);
  return ext;
}

async function assertCommandsRegistered(): Promise<void> {
  const registered = new Set(await vscode.commands.getCommands(true));
  const missing = contributedCommands.filter((id) => !registered.has(id));
  assert.deepEqual(missing, [], 'commands contributed in package.json but not registered by activate()');
}

describe('extension activation', () => {
  it('runs in a Node extension host new enough for @kubernetes/client-node 2 and sees the test cluster', () => {
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
    assert.ok(major > 22 || (major === 22 && minor >= 19), `extension host runs Node ${process.version}`);
    const kubeconfig = process.env.RECONCILE_LAB_KUBECONFIG;
    assert.ok(kubeconfig, 'RECONCILE_LAB_KUBECONFIG is not set in the extension host');
    assert.equal(process.env.KUBECONFIG, kubeconfig);
    assert.match(readFileSync(kubeconfig, 'utf8'), /clusters:/);
  });

  it('is loaded from the repository under development and activates', async () => {
    const ext = await activated();
    assert.equal(ext.packageJSON.version, manifest.version);
    assert.equal(ext.extensionUri.scheme, 'file');
    assert.equal(readFileSync(join(ext.extensionPath, 'package.json'), 'utf8'), readFileSync(join(__dirname, '../../package.json'), 'utf8'));
  });

  it('contributes commands', () => {
    assert.ok(contributedCommands.length > 0, 'package.json contributes no commands');
    assert.equal(new Set(contributedCommands).size, contributedCommands.length, 'duplicate command ids in package.json');
  });

  it('registers every command contributed in package.json', async () => {
    await activated();
    await assertCommandsRegistered();
  });

  it('links and menus only name contributed commands', () => {
    const known = new Set(contributedCommands);
    const referenced: string[] = [];
    for (const w of manifest.contributes?.viewsWelcome ?? []) {
      for (const m of w.contents.matchAll(/\(command:([\w.-]+)/g)) referenced.push(m[1] ?? '');
    }
    for (const items of Object.values(manifest.contributes?.menus ?? {})) {
      for (const item of items) if (item.command) referenced.push(item.command);
    }
    assert.deepEqual(referenced.filter((id) => !known.has(id)), [], 'referenced but not contributed');
  });
});

describe('extension activation in an untrusted workspace [untrusted]', () => {
  it('runs with workspace trust withheld', () => {
    assert.equal(vscode.workspace.isTrusted, false);
    assert.ok(vscode.workspace.workspaceFolders?.length, 'the untrusted variant opens a workspace folder');
  });

  it('still activates and registers its commands (untrustedWorkspaces: limited)', async () => {
    await activated();
    await assertCommandsRegistered();
  });
});
