import * as vscode from 'vscode';
import { RemoteController } from '../../core/bridge/remoteController.ts';
import type { Controller, StepResult } from '../../core/controller/controller.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import type { Session } from '../session/session.ts';
import { formatDuration } from '../views/format.ts';
import { dueIn, outcomeSummary } from '../views/presentation.ts';
import { boolArg, fail, isFailure, type CommandResult, type Failure } from './args.ts';
import { requireSession, resolveTarget } from './pickers.ts';
import * as ui from '../ui.ts';
import { refusePrivileged, TOKEN_FIELD } from './privileged.ts';

type LoopState = 'running' | 'paused' | 'stopped';

function requireLoop(lab: ReconcileLab, arg: unknown): { s: Session; c: Controller } | Failure {
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  if (!s.controller) {
    const message = s.loopProblem?.message ?? 'No reconcile loop in this connection.';
    if (arg === undefined) void ui.warn(`Reconcile Lab: ${message}`);
    return fail(s.loopProblem?.reason === 'untrusted' ? 'untrusted' : 'noLoop', message);
  }
  return { s, c: s.controller };
}

function flash(text: string): void {
  ui.statusMessage(text, 5000, 'debug-step-over');
}

/** Start: runs the workers (starting the controller first when stopped). */
export async function startLoop(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ loop: LoopState }>> {
  const r = requireLoop(lab, arg);
  if (isFailure(r)) return r;
  await r.c.start();
  r.c.resume();
  lab.renderStatus();
  return { ok: true, loop: r.s.loopState() };
}

/** Stop: aborts in-flight reconciles and drops the queue (key history is kept). */
export async function stopLoop(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ loop: LoopState }>> {
  const r = requireLoop(lab, arg);
  if (isFailure(r)) return r;
  // A Go controller's loop lives in its program: the editor can pause its workers, not stop its loop.
  if (r.s.showsExternal) return fail('invalidArgument', `The views show the Go controller ${r.c.name}, whose loop runs in its program: Pause Reconcile Loop stops its workers, Stop Controller ends the program.`);
  await r.c.stop();
  lab.renderStatus();
  return { ok: true, loop: r.s.loopState() };
}

export async function pauseLoop(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ loop: LoopState }>> {
  const r = requireLoop(lab, arg);
  if (isFailure(r)) return r;
  r.c.pause();
  lab.renderStatus();
  return { ok: true, loop: r.s.loopState() };
}

export async function resumeLoop(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ loop: LoopState }>> {
  const r = requireLoop(lab, arg);
  if (isFailure(r)) return r;
  if (r.s.loopState() === 'stopped') await r.c.start();
  r.c.resume();
  lab.renderStatus();
  return { ok: true, loop: r.s.loopState() };
}

/**
 * What a step answered, in a sentence. `heldInDebugger`: the controller's process sits at a breakpoint (a Go
 * controller under a debug session), which is why a busy key's reconcile does not end.
 */
function describeStep(step: StepResult, now: number, heldInDebugger = false): string {
  switch (step.kind) {
    case 'reconciled':
      return `${step.key}: ${outcomeSummary(step.outcome, step.durationMs)}`;
    case 'notReady':
      return `${step.key} waits for its ${step.waiting === 'backoff' ? 'backoff retry' : 'requeue'} (due ${dueIn(step.dueAt, now)}).`;
    case 'busy':
      if (heldInDebugger) return `${step.key} is being reconciled right now, and its process is stopped in the debugger: continue the debug session (F5) to let the reconcile finish.`;
      return step.stepping ? `${step.key} is being stepped already: that step answers when its reconcile ends.` : `${step.key} is being reconciled right now.`;
    case 'empty':
      return step.next ? `Nothing is queued; ${step.next.key} is due ${dueIn(step.next.dueAt, now)}.` : 'Nothing is queued.';
    case 'notRunning':
      return 'The loop is not running.';
  }
}

/**
 * Step: one reconcile, then the loop stays paused. Argument: nothing (the next
 * queued key), a key element / `{ key, resource }`, and `{ force: true }` to
 * run a key before its backoff or requeue-after is due. A stopped loop is
 * started paused first.
 */
export async function stepReconcile(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ step: StepResult; summary: string }>> {
  const refused = refusePrivileged(arg, ['force']);
  if (refused) return refused;
  const r = requireLoop(lab, arg);
  if (isFailure(r)) return r;
  let key: string | undefined;
  if (arg !== undefined && !(typeof arg === 'object' && arg !== null && Object.keys(arg).every((k) => k === 'force' || k === TOKEN_FIELD))) {
    const t = await resolveTarget(r.s, lab.clock.now(), arg, { primaryOnly: true, title: 'Step which key?' });
    if (isFailure(t)) return t;
    key = t.key;
  } else {
    // No key given (title button, F10, palette): the key selected in the views, else the head of the queue —
    // the same one the views' title and the status bar announce.
    const target = lab.stepTarget();
    if (target?.source === 'selection') key = target.key;
  }
  const wasStopped = r.s.loopState() === 'stopped';
  if (wasStopped) {
    r.c.pause();
    await r.c.start();
  }
  const force = boolArg(arg, 'force') === true;
  let step = await r.c.step({ ...(key ? { key } : {}), force });
  lab.renderStatus();
  const heldInDebugger = () => lab.go.all.some((g) => g.controller === r.c && g.process.liveness === 'stoppedInDebugger');
  let summary = describeStep(step, lab.clock.now(), step.kind === 'busy' && heldInDebugger());
  // Invoked by a person (palette, or a tree / queue element, which carries a `type`): offer to force a key
  // that waits for its backoff or requeue-after. Programmatic calls ({ key, resource }) decide with `force`.
  const fromUi = arg === undefined || (typeof arg === 'object' && arg !== null && typeof (arg as { type?: unknown }).type === 'string');
  if (step.kind === 'notReady' && fromUi) {
    const choice = await ui.info(`Reconcile Lab: ${summary}`, 'Step It Now');
    if (choice) {
      step = await r.c.step({ key: step.key, force: true });
      summary = describeStep(step, lab.clock.now());
    }
  }
  if (step.kind === 'reconciled' && wasStopped && !key && fromUi) {
    // Nobody could name this key before the press (the title said the loop starts first): say which key ran.
    const text = `Reconcile Lab: the loop was stopped, so Step started it paused and reconciled the head of its queue, ${summary.replace(/\.$/, '')}. Select a key in the Resources or Work Queue view to step that one.`;
    void (step.outcome.kind === 'error' || step.outcome.kind === 'terminal' ? ui.warn(text) : ui.info(text));
  } else if (step.kind === 'reconciled') {
    if (step.outcome.kind === 'error' || step.outcome.kind === 'terminal') void ui.warn(`Reconcile Lab: step ${summary}`);
    else flash(`Step ${summary}`);
  } else if (step.kind !== 'notReady' || !fromUi) {
    flash(summary);
  }
  lab.log.info('step', { summary, key: 'key' in step ? step.key : undefined, took: step.kind === 'reconciled' ? formatDuration(step.durationMs) : undefined });
  return { ok: true, step, summary };
}

/** Reconcile now: queues the key at once, skipping a pending backoff or requeue-after wait. */
export async function reconcileNow(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ key: string }>> {
  const r = requireLoop(lab, arg);
  if (isFailure(r)) return r;
  const t = await resolveTarget(r.s, lab.clock.now(), arg, { primaryOnly: true, title: 'Reconcile which key now?' });
  if (isFailure(t)) return t;
  // A Go controller's cache may leave the object out (a label selector): say why rather than "stopped".
  const outside = r.c instanceof RemoteController ? r.c.selectorRefusal(t.key) : undefined;
  if (outside !== undefined) return fail('invalidArgument', `Reconcile now refused: ${outside}`);
  if (!r.c.reconcileNow(t.key)) return fail('noLoop', 'The loop is stopped: start it (or step) first.');
  flash(`${t.key} queued${r.s.loopState() === 'paused' ? ' (the loop is paused: step or resume)' : ''}`);
  return { ok: true, key: t.key };
}

/** Reset backoff: forgets the key's failure count (its next failure starts from the base delay) and queues it now. */
export async function resetBackoff(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ key: string; requeuesBefore: number }>> {
  const r = requireLoop(lab, arg);
  if (isFailure(r)) return r;
  const t = await resolveTarget(r.s, lab.clock.now(), arg, { primaryOnly: true, title: 'Reset the backoff of which key?' });
  if (isFailure(t)) return t;
  const before = r.c.keyState(t.key)?.requeues ?? 0;
  if (!r.c.resetBackoff(t.key)) return fail('noLoop', 'The loop is stopped: start it (or step) first.');
  flash(`${t.key}: backoff reset (was ${before} failure${before === 1 ? '' : 's'})`);
  return { ok: true, key: t.key, requeuesBefore: before };
}
