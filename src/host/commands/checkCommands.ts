import * as vscode from 'vscode';
import { CHECK_KINDS, CHECK_TITLES, type CheckKind, type CheckReport } from '../../core/checks/types.ts';
import { keyOf as keyOfObject, splitKey } from '../../core/k8s/keys.ts';
import { copiesFromSetting, isLocalConnection } from '../checks/cluster.ts';
import { readSettings } from '../config.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import type { Session } from '../session/session.ts';
import * as ui from '../ui.ts';
import { boolArg, fail, isFailure, keyOf, stringArg, stringArrayArg, targetOf, type CommandResult } from './args.ts';
import { requireSession } from './pickers.ts';
import { refusePrivileged } from './privileged.ts';
import { remoteOf } from './goControllerCommands.ts';
import { goContextProblem, type GoCheckTarget } from '../../core/checks/goRun.ts';

/** What each check does, for the pick list. */
const CHECK_DETAILS: Record<CheckKind, string> = {
  runTwice: 'Reconcile the same state twice: the second run must write nothing (no-op writes, non-idempotent creates).',
  crashAfterWrite: 'Stop the controller after each write but the last, restart it with a fresh cache and queue, compare the end state.',
  staleCache: 'Reconcile from a cache frozen while the server moved on: flag writes that destroy or overwrite newer state.',
  unobservedState: 'Withhold the watch events between two states: the end state must equal the reference.',
  historyIndependence: 'Change the spec step by step (watched, and again while no controller runs), then create a fresh object with the final spec: all must end in the same state; then change it back: the state before must return.',
  convergence: 'After the spec stops changing the key must go idle, stop writing within a bound and not flap.',
  deletion: 'Delete the settled copy: it must be gone within the bound (finalizers removed, no failing reconcile on the Terminating object).',
  childDrift: 'Delete, then change, each child the controller created, behind its back: it must put each one back (a watch of its children, no filter dropping their events).',
};

/**
 * Run Robustness Checks…: runs the Sieve / Acto / Anvil style checks (src/core/checks) with the loop's reconciler
 * on copies of the chosen objects in scratch namespaces, and shows the results view.
 *
 * - Keys: the object the command was run on (a tree element, `{ key }`), `{ keys: [...] }`, or from the palette
 *   every key of the loop's resource.
 * - Checks: `{ checks: [...] }`, else a pick list (all selected).
 * - Cluster: the local control plane runs without asking; any other cluster must be confirmed by typing its
 *   context name (`{ confirmCluster }` only from the test suite, see privileged.ts).
 * - Trust: the exec and module reconcilers run workspace code, so they run only in a trusted workspace.
 * - Go: when the views show the developer's Go controller, every run of the checks is a new instance of its
 *   program (Run Controller's launch, else the goController settings) over a scratch namespace (core goRun.ts).
 *
 * Resolves to `{ ok: true, totals, findings: [{ check, key, title }], aborted }`.
 */
export async function runChecksCommand(
  lab: ReconcileLab,
  arg: unknown,
): Promise<CommandResult<{ totals: CheckReport['totals']; findings: Array<{ check: string; key: string; title: string; severity: string }>; aborted: boolean; durationMs: number }>> {
  const refused = refusePrivileged(arg, ['confirmCluster']);
  if (refused) return refused;
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  const remote = remoteOf(s);
  let go: GoCheckTarget | undefined;
  let recipe = s.reconcilerRecipe;
  if (remote) {
    // The views show the developer's Go controller: the checks start new instances of ITS program (the one Run
    // Controller launched, else what Run Controller would launch), each over a scratch namespace.
    if (!vscode.workspace.isTrusted) return fail('untrusted', 'The Go controller is code from this workspace, so the checks only run it in a trusted workspace.');
    if (remote.announcement.requestType) {
      return fail('noLoop', `The Go controller ${remote.name} has a custom request type (${remote.announcement.requestType}): the checks reconcile copies of an object by its key, so they cannot drive it. Show a controller of reconcile.Request keys (Show Controller…) to check it.`);
    }
    if (remote.resourceId !== undefined && s.primaryResource !== undefined && remote.resourceId !== s.primaryResource) {
      return fail('noLoop', `The Go controller ${remote.name} reconciles ${remote.resourceId}, but the views show ${s.primaryResource}: choose that resource to check it.`);
    }
    const contextProblem = goContextProblem(s.kubeconfigPath, s.contextName);
    if (contextProblem) return fail('noLoop', contextProblem[0]!.toUpperCase() + contextProblem.slice(1));
    const launched = lab.go.launchedProcess;
    if (!launched || launched.exit) {
      const unsettled = await lab.go.chooseModule(arg, 'Run Robustness Checks…');
      if (unsettled) return unsettled;
    }
    const spec = launched && !launched.exit ? launched.spec : lab.go.runRequest(undefined).spec;
    const command = [spec.command, ...spec.args];
    go = { command, controller: remote.name, ...(spec.cwd ? { cwd: spec.cwd } : {}), env: { ...(spec.env ?? {}), ...(s.kubeconfigPath ? { KUBECONFIG: s.kubeconfigPath } : {}) } };
    recipe = {
      spec: { kind: 'go', command },
      flag: `go:${command.join(' ')}`,
      create: () => {
        throw new Error('the Go controller runs in its own process');
      },
    };
  }
  if (!recipe || !s.primaryInfo || !s.primaryResource) {
    return fail(s.loopProblem?.reason === 'untrusted' ? 'untrusted' : 'noLoop', s.loopProblem?.message ?? 'No reconciler in this connection: the checks run the loop\'s reconciler.');
  }
  if ((recipe.spec.kind === 'exec' || recipe.spec.kind === 'module') && !vscode.workspace.isTrusted) {
    return fail('untrusted', `The ${recipe.spec.kind} reconciler runs code from this workspace, so the checks only run it in a trusted workspace.`);
  }
  if (!remote && s.controller && s.controller !== s.builtInController) {
    return fail('noLoop', `The views show a controller the checks cannot start again; switch back with Show Controller… to check the loop's reconciler (${recipe.flag}).`);
  }
  if (lab.checks.isRunning) return fail('error', 'Robustness checks are already running: cancel them in the progress notification first.');
  // The copies the setting names: a bad entry stops the run before anything is asked or written.
  try {
    copiesFromSetting(readSettings()['checks.copy']);
  } catch (e) {
    return fail('invalidArgument', (e as Error).message);
  }

  // Which keys.
  const primary = s.primaryResource;
  let keys: string[];
  const target = targetOf(arg);
  const listed = stringArrayArg(arg, 'keys');
  if (target) {
    if (target.resource !== primary) return fail('invalidArgument', `${target.resource} ${target.key} is not reconciled by the loop (it reconciles ${primary}).`);
    keys = [target.key];
  } else if (keyOf(arg)) keys = [keyOf(arg)!];
  else if (listed) keys = listed;
  else if (arg === undefined || (typeof arg === 'object' && arg !== null)) keys = s.list(primary).map((o) => keyOfObject(o)).sort();
  else return fail('invalidArgument', 'Expected a tree element, { key }, or { keys: [...] }.');
  for (const k of keys) {
    try {
      splitKey(k);
    } catch (e) {
      return fail('invalidArgument', (e as Error).message);
    }
  }
  if (keys.length === 0) {
    if (arg === undefined) void ui.info(`Reconcile Lab: no ${s.primaryInfo.kind} objects to check.`);
    return fail('notFound', `No ${s.primaryInfo.kind} objects to check.`);
  }

  // Which checks.
  let checks: CheckKind[];
  const given = stringArrayArg(arg, 'checks');
  if (given) {
    const unknown = given.filter((c) => !(CHECK_KINDS as readonly string[]).includes(c));
    if (unknown.length) return fail('invalidArgument', `Unknown check(s): ${unknown.join(', ')} (checks: ${CHECK_KINDS.join(', ')}).`);
    checks = given as CheckKind[];
  } else {
    const picked = await ui.pick(
      CHECK_KINDS.map((c) => ({ label: CHECK_TITLES[c], detail: CHECK_DETAILS[c], picked: true, check: c })),
      { title: `Robustness checks of ${keys.length === 1 ? keys[0] : `${keys.length} ${s.primaryInfo.kind} objects`} with ${recipe.flag}`, canPickMany: true, placeHolder: 'Checks to run (each runs on copies in a scratch namespace)' },
    );
    if (!picked || picked.length === 0) return fail('cancelled', 'No check chosen.');
    checks = CHECK_KINDS.filter((c) => picked.some((p) => p.check === c));
  }

  // Which cluster: anything but the local control plane is confirmed by name.
  const local = isLocalConnection(s.clusterName, s.server, Boolean(s.owned));
  const cluster = { name: s.contextName, server: s.server, local };
  let confirmCluster = stringArg(arg, 'confirmCluster');
  if (!local && confirmCluster === undefined) {
    confirmCluster = await ui.input({
      title: `Run robustness checks on ${s.contextName}?`,
      prompt: `${s.contextName} (${s.server}) is not the local control plane. The checks only write copies of your objects in scratch namespaces and delete them afterwards, but they do write to this cluster. Type the context name to confirm.`,
      placeHolder: s.contextName,
      validate: (v) => (v === '' || v === s.contextName ? undefined : `Type ${s.contextName} exactly.`),
    });
    if (confirmCluster !== s.contextName) return fail('cancelled', `Not confirmed: the checks run on ${s.contextName} only after you type its name.`);
  }
  if (!local && confirmCluster !== s.contextName) return fail('cancelled', `Not confirmed: ${JSON.stringify(confirmCluster)} is not ${s.contextName}.`);

  const resume = pauseWhileChecking(lab, s);
  let report;
  try {
    report = await lab.checks.run(s, recipe, cluster, { keys, checks, ...(confirmCluster !== undefined ? { confirmCluster } : {}) }, go);
  } finally {
    resume();
  }
  const t = report.totals;
  if (boolArg(arg, 'quiet') !== true) {
    const text = report.aborted
      ? `Robustness checks cancelled after ${t.passed + t.failed + t.skipped + t.errors} of ${t.checks} check(s).`
      : t.findings
        ? `Robustness checks: ${t.findings} finding(s) in ${t.failed} check(s). See the results view.`
        : `Robustness checks: no findings (${t.passed} passed, ${t.skipped} skipped${t.errors ? `, ${t.errors} could not run` : ''}).`;
    void (t.findings ? ui.warn(text, 'Show Results') : ui.info(text, 'Show Results')).then((c) => {
      if (c) lab.checks.show();
    });
  }
  return {
    ok: true,
    totals: t,
    findings: report.findings.map((f) => ({ check: f.check, key: f.key, title: f.title, severity: f.severity })),
    aborted: report.aborted,
    durationMs: report.durationMs,
  };
}

/**
 * The editor's own loops — the built-in loop and every Go controller connected to the views — must not reconcile the
 * checks' scratch copies, which would spoil what each check compares (a crash the loop completes, a stale view it
 * refreshes). Neither queues them: the built-in loop has an event filter (notScratchCopies), and an attached Go program
 * that is not a check instance drops their informer events before its handlers (bridge/scratch.go). As a second guard
 * (a program built with an older bridge, which would queue them), each loop that is running is paused now; the returned
 * function resumes exactly those (call it once, when the checks ended).
 */
function pauseWhileChecking(lab: ReconcileLab, s: Session): () => void {
  const loops = [s.builtInController, ...lab.go.all.map((r) => r.controller)].filter((c): c is NonNullable<typeof c> => c !== undefined);
  const paused = loops.filter((c) => !c.status().paused);
  for (const c of paused) c.pause();
  if (paused.length) {
    ui.statusMessage(`Reconcile Lab: ${paused.map((c) => c.name).join(', ')} paused while the checks run (resumed after)`, 5000, 'debug-pause');
  }
  return () => {
    for (const c of paused) c.resume();
  };
}

/** Show Robustness Check Results: opens the results view (the last run's results, if any). */
export function showChecks(lab: ReconcileLab): CommandResult<{ hasReport: boolean }> {
  lab.checks.show();
  return { ok: true, hasReport: lab.checks.lastReport !== undefined };
}
