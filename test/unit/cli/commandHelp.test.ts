import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMMANDS, commandFlags, commandHelp, HELP, helpFor, parseCliArgs, UsageError } from '../../../src/cli/args.ts';
import { runCli, type CliIo } from '../../../src/cli/cli.ts';
import { toDisposable } from '../../../src/core/lifecycle.ts';

/** A value each option takes (booleans: none), valid for the parser. */
const VALUES: Record<string, string | undefined> = {
  kubeconfig: 'k', context: 'c', resource: 'configmaps', namespace: 'shop', reconciler: 'exec:./r.sh', go: 'go run ./cmd',
  'go-wait': '60', controller: 'second', finalizer: 'example.com/f', yes: undefined, 'dry-run': undefined, duration: '5',
  workers: '2', 'reconcile-timeout': '5', 'exec-timeout': '5', owns: 'secrets', predicate: 'generation-changed',
  'work-queue': 'client-go', check: 'runTwice', 'confirm-cluster': 'x', transition: '{"a":1}', copy: 'secret/x',
  'convergence-bound': '5', json: undefined, markdown: undefined, 'drop-managed-fields': undefined, 'watch-list': 'off',
  verbose: undefined, help: undefined,
};
/** An option that needs another to apply: given with it. */
const NEEDS: Record<string, string[]> = { 'go-wait': ['--go', 'go run ./cmd'], controller: ['--go', 'go run ./cmd'], 'exec-timeout': ['--reconciler', 'exec:./r.sh'] };
const KEY_ARGS: Record<string, string[]> = { 'dry-run': ['shop/cart'], inspect: ['shop/cart'], 'strip-finalizers': ['shop/cart'] };

function capture(): { io: CliIo; out: { stdout: string; stderr: string } } {
  const out = { stdout: '', stderr: '' };
  return { out, io: { stdout: (s) => void (out.stdout += s), stderr: (s) => void (out.stderr += s), env: {}, onInterrupt: () => toDisposable(() => {}) } };
}

test("each command's help lists exactly the options its parser accepts (every other one is a usage error for it)", () => {
  for (const command of COMMANDS) {
    const listed = new Set(commandFlags(command));
    for (const [flag, value] of Object.entries(VALUES)) {
      if (flag === 'help') continue; // answered before the command's rules
      const argv = [command, ...(KEY_ARGS[command] ?? []), ...(NEEDS[flag] ?? []), `--${flag}`, ...(value === undefined ? [] : [value])];
      let accepted = true;
      try {
        parseCliArgs(argv);
      } catch (e) {
        if (!(e instanceof UsageError)) throw e;
        accepted = false;
      }
      assert.equal(accepted, listed.has(flag), `${argv.join(' ')}: ${accepted ? 'accepted, but not in its help' : 'refused, but in its help'}`);
      if (listed.has(flag)) assert.match(commandHelp(command), new RegExp(`^ {2}(-\\w, )?--${flag}\\b`, 'm'), `${command} --help shows --${flag}`);
    }
  }
});

test('run --help, run -h and help run show the command\'s help: its usage, what it does, its options and an example (it was the global help, and "help run" a usage error)', async () => {
  for (const argv of [['run', '--help'], ['run', '-h'], ['help', 'run'], ['--help', 'run']]) {
    const { io, out } = capture();
    assert.equal(await runCli(argv, io), 0, argv.join(' '));
    assert.equal(out.stdout, commandHelp('run'), argv.join(' '));
    assert.equal(out.stderr, '');
  }
  const run = commandHelp('run');
  assert.match(run, /^Usage: reconcile-lab run \[options\]\n\n {2}watch the resource and reconcile continuously/);
  assert.match(run, /\nExample:\n {2}reconcile-lab run -n shop /);
  assert.match(run, /^ {2}--workers <n> /m);
  assert.doesNotMatch(run, /--finalizer|--yes|--check </, 'options run refuses are not listed');
  assert.match(commandHelp('strip-finalizers'), /^Usage: reconcile-lab strip-finalizers <key> \[options\]\n\n {2}diagnose why <key> is stuck/);
  assert.match(commandHelp('check'), /^ {2}--check <names> /m);
  assert.equal(helpFor(['help']), HELP);
  assert.equal(helpFor(['--help']), HELP);
  assert.equal(helpFor(['step', '-n', 'shop', '--help']), commandHelp('step'));
});

test('help of something that is not a command is a usage error with the command meant', async () => {
  const { io, out } = capture();
  assert.equal(await runCli(['help', 'rn'], io), 2);
  assert.match(out.stderr, /^reconcile-lab: no help for "rn": not a command; did you mean "run"\? \(commands: run, step/);
  assert.throws(() => parseCliArgs(['bogus', '--help']), (e: unknown) => e instanceof UsageError && /no help for "bogus"/.test(e.message));
});
