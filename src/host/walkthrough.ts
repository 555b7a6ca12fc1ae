import * as vscode from 'vscode';
import type { ContextKeyWriter } from './contextKeys.ts';
import { CommandIds, WalkthroughIds, WalkthroughSteps, type CommandId, type WalkthroughStep } from './ids.ts';

/** How long {@link WalkthroughProgress.open} keeps the keys false after VS Code opened the walkthrough. */
const REGISTER_GRACE_MS = 500;

/** The command a person runs that completes a walkthrough step (when it succeeds). */
const stepOfCommand: Partial<Record<CommandId, WalkthroughStep>> = {
  [CommandIds.connect]: 'connect',
  [CommandIds.startLocalControlPlane]: 'connect',
  [CommandIds.selectResources]: 'views',
  [CommandIds.stepReconcile]: 'step',
  [CommandIds.dryRunReconcile]: 'step',
  [CommandIds.reconcileNow]: 'step',
  [CommandIds.resumeLoop]: 'step',
  [CommandIds.startLoop]: 'step',
  [CommandIds.showEventLog]: 'eventLog',
  [CommandIds.showTimeline]: 'eventLog',
  [CommandIds.runController]: 'goController',
  [CommandIds.setUpGoBridge]: 'goController',
  [CommandIds.runChecks]: 'checks',
};

/**
 * The Get Started walkthrough's progress in this window.
 *
 * VS Code checks a step off on its completion events, but only while its walkthrough service exists (it is created
 * when a walkthrough or the Welcome page is first shown), and an `onContext` event whose expression already holds
 * when the service registers the step is never counted. So each step also completes on a context key of its own
 * (WalkthroughSteps) that this class sets: {@link mark} sets it when the window does the step, and {@link open}
 * clears every key, opens the walkthrough (the service now registers the steps with the keys false) and sets the
 * keys of the steps done again, which VS Code then sees as changes and checks off.
 *
 * Contract: keys only go false → true, except inside {@link open}; all writes go through the window's one
 * ContextKeyWriter, in call order.
 */
export class WalkthroughProgress {
  private readonly done = new Set<WalkthroughStep>();
  /** True while {@link open} holds every key false. */
  private opening = false;
  /** Serializes {@link open} calls. */
  private openChain: Promise<void> = Promise.resolve();
  private readonly keys: ContextKeyWriter;
  private readonly extensionId: string;

  /** `extensionId`: this extension's `<publisher>.<name>`, which names the walkthrough. */
  constructor(keys: ContextKeyWriter, extensionId: string) {
    this.keys = keys;
    this.extensionId = extensionId;
  }

  /** Marks `step` done in this window (idempotent). While {@link open} runs, its key is set when open ends. */
  mark(step: WalkthroughStep): void {
    this.done.add(step);
    if (!this.opening) this.keys.set(WalkthroughSteps[step], true);
  }

  /** Marks the step that a successful run of `command` completes, if any. */
  commandSucceeded(command: CommandId): void {
    const step = stepOfCommand[command];
    if (step) this.mark(step);
  }

  /** Whether `step` was done in this window. */
  isDone(step: WalkthroughStep): boolean {
    return this.done.has(step);
  }

  /**
   * Opens the walkthrough in the active editor group, with the steps done so far checked off. Every key stays false
   * from before the walkthrough opens until REGISTER_GRACE_MS after (VS Code registers the steps as the page opens):
   * a step done meanwhile (a connect finishing) is only recorded, and its key set with the others at the end, so VS
   * Code sees each done step's key change after it registered the step.
   */
  async open(): Promise<void> {
    const previous = this.openChain;
    let release = () => {};
    this.openChain = new Promise<void>((r) => (release = r));
    await previous;
    this.opening = true;
    try {
      for (const key of Object.values(WalkthroughSteps)) await this.setNow(key, false);
      await vscode.commands.executeCommand('workbench.action.openWalkthrough', `${this.extensionId}#${WalkthroughIds.gettingStarted}`, false);
      await new Promise((r) => setTimeout(r, REGISTER_GRACE_MS));
    } finally {
      this.opening = false;
      try {
        for (const step of this.done) await this.setNow(WalkthroughSteps[step], true);
      } finally {
        release();
      }
    }
  }

  /** Sets a key and waits for the renderer to have it (the writer's cache follows). */
  private async setNow(key: string, value: boolean): Promise<void> {
    await vscode.commands.executeCommand('setContext', key, value);
    this.keys.remember(key, value);
  }
}
