import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { LAB_USAGE, LabUsageError, parseLabArgs } from '../../../scripts/labOptions.mjs';

const root = resolve(import.meta.dirname, '../../..');
const { installState } = createRequire(import.meta.url)('../../../scripts/installState.cjs') as { installState: (root: string) => { stale: () => boolean } };

/** `node scripts/lab.mjs …` with a time limit: a wrong command line must end before the lab starts anything. */
function lab(args: string[], cwd = root) {
  return spawnSync(process.execPath, [join(root, 'scripts/lab.mjs'), ...args], { cwd, encoding: 'utf8', timeout: 30_000, env: { ...process.env, INIT_CWD: cwd } });
}

describe('scripts/lab.mjs command line', () => {
  for (const flag of ['--help', '-h']) {
    it(`${flag} prints the usage and exits 0 without starting the lab`, () => {
      const r = lab([flag]);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, LAB_USAGE);
      assert.doesNotMatch(r.stdout, /\[lab\]/, 'nothing was built or started');
    });
  }

  it('the usage lists every option the parser takes', () => {
    for (const o of ['--folder <path>', '--no-vscode', '--browser', '--port <n>', '-h, --help']) assert.ok(LAB_USAGE.includes(o), o);
  });

  it('an unknown option is an error naming it (exit 2), not ignored', () => {
    const r = lab(['--no-vscode', '--bogus']);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /unknown option --bogus/);
    assert.match(r.stderr, /--help lists the options/);
    assert.equal(r.stdout, '');
  });

  it('a folder that does not exist is an error (exit 2)', () => {
    const r = lab(['--folder', 'no-such-folder-here']);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stderr, new RegExp(`the folder ${join(root, 'no-such-folder-here')} does not exist`));
  });

  it('through scripts/run.cjs (npm run lab), a relative folder is resolved from where the command was typed', (t) => {
    // run.cjs would first run `npm ci` on a stale checkout; that belongs to `npm test`, not to this test.
    if (installState(root).stale()) {
      t.skip('node_modules was not installed from this package-lock.json');
      return;
    }
    const away = mkdtempSync(join(tmpdir(), 'reconcile-lab-labcwd-'));
    try {
      const env = { ...process.env };
      delete env.INIT_CWD;
      const r = spawnSync(process.execPath, [join(root, 'scripts/run.cjs'), 'lab', 'missing-project'], { cwd: away, encoding: 'utf8', timeout: 30_000, env });
      assert.equal(r.status, 2, r.stdout + r.stderr);
      assert.ok(r.stderr.includes(`the folder ${join(away, 'missing-project')} does not exist`), r.stderr);
    } finally {
      rmSync(away, { recursive: true, force: true });
    }
  });
});

describe('parseLabArgs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'reconcile-lab-labargs-'));
  mkdirSync(join(dir, 'my-operator'));
  writeFileSync(join(dir, 'notes.txt'), 'x');
  const ctx = { cwd: dir, root };
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));

  it('defaults: VS Code on samples/, any port, desktop or browser as found', () => {
    assert.deepEqual(parseLabArgs([], ctx), { help: false, vscode: true, browser: false, port: undefined, folder: join(root, 'samples') });
  });

  it('the existing options keep their meaning', () => {
    assert.deepEqual(parseLabArgs(['--no-vscode'], ctx), { help: false, vscode: false, browser: false, port: undefined, folder: join(root, 'samples') });
    assert.deepEqual(parseLabArgs(['--browser', '--port', '8123'], ctx), { help: false, vscode: true, browser: true, port: 8123, folder: join(root, 'samples') });
    assert.equal((parseLabArgs(['--port=0'], ctx) as { port: number }).port, 0);
  });

  it('--folder, --folder=, or a bare path opens that folder; relative to the directory the command ran in', () => {
    const want = join(dir, 'my-operator');
    for (const args of [['--folder', 'my-operator'], ['--folder=my-operator'], ['my-operator'], ['--folder', want], ['./my-operator/']]) {
      assert.equal((parseLabArgs(args, ctx) as { folder: string }).folder, want, args.join(' '));
    }
  });

  it('--help after other options still only asks for the usage', () => {
    assert.deepEqual(parseLabArgs(['--no-vscode', '-h'], ctx), { help: true });
    assert.deepEqual(parseLabArgs(['--folder', 'my-operator', '--help'], ctx), { help: true });
  });

  const bad: Array<[string[], RegExp]> = [
    [['--bogus'], /^unknown option --bogus$/],
    [['-x'], /^unknown option -x$/],
    [['--port'], /--port needs a port number from 0 to 65535 \(got nothing\)/],
    [['--port', 'abc'], /--port needs a port number .*\(got abc\)/],
    [['--port', '70000'], /\(got 70000\)/],
    [['--folder'], /--folder needs a path/],
    [['--no-vscode=yes'], /--no-vscode takes no value/],
    [['--folder', 'nope'], new RegExp(`the folder ${join(dir, 'nope')} does not exist`)],
    [['notes.txt'], /notes\.txt is a file, not a folder/],
    [['my-operator', '--folder', 'my-operator'], /two folders given/],
    [['--no-vscode', 'my-operator'], /--no-vscode leaves out/],
  ];
  for (const [args, message] of bad) {
    it(`rejects ${args.join(' ')}`, () => {
      assert.throws(() => parseLabArgs(args, ctx), (e: unknown) => e instanceof LabUsageError && message.test(e.message));
    });
  }
});
