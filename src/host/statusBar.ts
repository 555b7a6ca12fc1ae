import * as vscode from 'vscode';
import { shortKey } from '../core/k8s/keys.ts';
import { CommandIds, ViewIds } from './ids.ts';
import { inert, inertMarkdown } from './safeText.ts';
import type { QueueCounts } from './views/queueTree.ts';

export type StatusBarState =
  | { readonly kind: 'disconnected' }
  | { readonly kind: 'connecting'; readonly target: string }
  | {
      readonly kind: 'connected';
      readonly context: string;
      readonly server: string;
      readonly loop: 'running' | 'paused' | 'stopped';
      readonly loopAvailable: boolean;
      readonly counts: QueueCounts;
      readonly resources: number;
      /** Set while the views show a controller running elsewhere (a Go process): what it is and its liveness. */
      readonly external?: string;
      /** What Step acts on ("Step ns/name (selected)"), while the loop does not run. */
      readonly step?: string;
      /** Set while the API server cannot be reached: what happened and what the informers and the loop do. */
      readonly unreachable?: string;
    };

/** The connection and queue-depth item in the status bar. */
export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem('reconcileLab.status', vscode.StatusBarAlignment.Left, 50);
    this.item.name = 'Reconcile Lab';
    this.update({ kind: 'disconnected' });
    this.item.show();
  }

  /** The current text (for tests). */
  get text(): string {
    return this.item.text;
  }

  update(s: StatusBarState): void {
    const item = this.item;
    switch (s.kind) {
      case 'disconnected':
        item.text = '$(debug-disconnect) Reconcile Lab';
        item.tooltip = 'Reconcile Lab: not connected. Click to connect to a cluster.';
        item.command = CommandIds.connect;
        item.backgroundColor = undefined;
        return;
      case 'connecting':
        item.text = `$(sync~spin) Connecting to ${inert(s.target)}…`;
        item.tooltip = `Reconcile Lab: connecting to ${s.target}`;
        item.command = CommandIds.showOutput;
        item.backgroundColor = undefined;
        return;
      case 'connected': {
        const c = s.counts;
        const depth = c.queued + c.processing;
        const loopIcon = !s.loopAvailable ? '$(circle-slash)' : s.loop === 'running' ? '$(play)' : s.loop === 'paused' ? '$(debug-pause)' : '$(debug-stop)';
        // Without a loop there is no queue to count: say so ("no loop"), not "0 queued".
        const parts = [`$(plug) ${inert(s.context)}`, s.loopAvailable ? `${loopIcon} ${depth} queued` : `${loopIcon} no loop`];
        if (c.backoff) parts.push(`$(error) ${c.backoff} backoff`);
        if (s.external) parts.push(`$(debug-alt) ${inert(s.external.replace(/^Go controller /, 'Go '))}`); // the name is the program's
        if (s.step) parts.push(`$(debug-step-over) ${inert(shortKey(s.step.replace(/^Step /, '').replace(/ \((selected|next in queue)\)$/, '')))}`);
        if (s.unreachable) parts.splice(1, 0, '$(warning) server unreachable');
        item.text = parts.join('  ');
        // Cluster text (the context's name, the server's address, a Go program's name, an error) goes in through
        // inertMarkdown: no link, HTML or icon can come out of it.
        const paragraphs = [
          `Context ${s.context} at ${s.server}`,
          `Watching ${s.resources} resource(s). Loop: ${s.loopAvailable ? s.loop : 'none (the Work Queue view says why)'}.`,
          `Queue: ${c.queued} queued, ${c.processing} processing, ${c.backoff} in backoff, ${c.requeueAfter} waiting to requeue.`,
          ...(s.external ? [`Showing ${s.external}.`] : []),
          ...(s.step ? [`${s.step}: F10 in the views, or the Step button.`] : []),
          ...(s.unreachable ? [s.unreachable] : []),
        ];
        const md = new vscode.MarkdownString(['**Reconcile Lab**', ...paragraphs.map((p) => inertMarkdown(p))].join('\n\n'));
        item.tooltip = md;
        item.command = `${ViewIds.queue}.focus`;
        item.backgroundColor = c.backoff || s.unreachable ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
        return;
      }
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}
