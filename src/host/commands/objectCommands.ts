import * as vscode from 'vscode';
import { dryRunReconcile, type DryRunResult } from '../../core/actions/dryRun.ts';
import { renderDryRun } from './dryRunText.ts';
import { diagnoseStuck, goKnownController, knownOwnerOf, lastReconcileOf, loopKnownController, managersOfFinalizer, removeFinalizers, ObjectChangedError, type FinalizerDiagnosis, type KnownController, type StuckDiagnosis } from '../../core/actions/finalizers.ts';
import { inspectKey, inspectTitle, type CacheState } from '../../core/actions/inspect.ts';
import { displayPair, toYaml } from '../../core/actions/objectDiff.ts';
import { splitKey } from '../../core/k8s/keys.ts';
import type { KubeObject, ResourceInfo } from '../../core/k8s/objects.ts';
import { isSecret } from '../../core/k8s/secretMask.ts';
import { remoteDryRun, remoteOf } from './goControllerCommands.ts';
import type { ReconcileLab } from '../reconcileLab.ts';
import { FIELD_MANAGER, type Session } from '../session/session.ts';
import { ageOf } from '../views/format.ts';
import { revealUntilSelected } from '../views/revealRetry.ts';
import type { ResourceNode } from '../views/resourcesTree.ts';
import { boolArg, fail, isConfirmed, isFailure, stringArg, type CommandResult, type Failure, type ObjectTarget } from './args.ts';
import { requireSession, resolveTarget } from './pickers.ts';
import { stepReconcile } from './loopCommands.ts';
import { DRY_RUN_VIEW, showResultView } from './resultView.ts';
import * as ui from '../ui.ts';
import { refusePrivileged } from './privileged.ts';
import { deleteConfirmFinalizers, deletedTerminatingMessage, finalizerPickDetail, loopDisplayName, stripConfirmDetail, type LoopFinalizers } from './finalizerText.ts';

function infoOf(s: Session, t: ObjectTarget): ResourceInfo | Failure {
  const info = s.info(t.resource);
  return info ?? fail('notFound', `${t.resource} is not served by ${s.server}.`);
}

function fileSafe(key: string): string {
  return key.replace(/\//g, '_');
}

/** Open as YAML: the informer's copy, read-only, refreshed live as the cache changes. */
export async function openYaml(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ uri: string }>> {
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  const t = await resolveTarget(s, lab.clock.now(), arg, { title: 'Open which object as YAML?' });
  if (isFailure(t)) return t;
  if (!s.get(t.resource, t.key)) return fail('notFound', `${t.resource} ${t.key} is not in the informer cache.`);
  const uri = lab.documents.cacheUri(t.resource, t.key);
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, { preview: true });
  return { ok: true, uri: uri.toString() };
}

/** The resource id of Secrets (core group: the plural alone). */
const SECRETS_RESOURCE = 'secrets';

/**
 * Reveal Secret Values: the live cache view of one Secret with its values shown, after a modal confirmation
 * (`{ confirmed: true }` skips it, with the argument token only). Everywhere else (Open as YAML, diffs, dry-run
 * plans, reports) Secret values stay masked.
 */
export async function revealSecret(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ uri: string }>> {
  const refused = refusePrivileged(arg, ['confirmed']);
  if (refused) return refused;
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  // From the palette: only Secrets are offered, and none are when Secrets are not watched (say how to watch them).
  if (arg === undefined && !s.resources.some((r) => r.id === SECRETS_RESOURCE)) {
    const message = 'No Secrets are watched in this connection, so there is none to show: add "secrets" to reconcileLab.resources (Choose Watched Resources…), then use Reveal Secret Values… on a Secret in the Resources view.';
    void ui.info(`Reconcile Lab: ${message}`, 'Choose Watched Resources…').then((c) => {
      if (c) void vscode.commands.executeCommand('reconcileLab.selectResources');
    });
    return fail('notFound', message);
  }
  const t = await resolveTarget(s, lab.clock.now(), arg, { title: 'Show the values of which Secret?', resources: [SECRETS_RESOURCE] });
  if (isFailure(t)) return t;
  const obj = s.get(t.resource, t.key);
  if (!obj) return fail('notFound', `${t.resource} ${t.key} is not in the informer cache.`);
  if (!isSecret(obj)) return fail('invalidArgument', `${t.resource} ${t.key} is not a Secret: Open as YAML shows everything it holds.`);
  if (!isConfirmed(arg)) {
    const go = await ui.confirmModal(
      `Show the values of Secret ${t.key}?`,
      'Its data and stringData values (and its last-applied-configuration annotation) appear in plain text in an editor tab, where screen sharing, screenshots or copy and paste can reach them. Everywhere else Reconcile Lab keeps them masked.',
      'Show Values',
    );
    if (go !== 'Show Values') return fail('cancelled', 'Nothing was shown.');
  }
  const uri = lab.documents.revealUri(t.resource, t.key);
  const doc = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(doc, { preview: true });
  return { ok: true, uri: uri.toString() };
}

/** Reveal an object in the Resources view (used by the Event Log; takes `{ key, resource }`). */
export async function revealObject(lab: ReconcileLab, arg: unknown): Promise<CommandResult<{ id: string }>> {
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  const t = await resolveTarget(s, lab.clock.now(), arg, { title: 'Reveal which object?' });
  if (isFailure(t)) return t;
  // VS Code drops a reveal without a word when its renderer could not find the row (rebuilt meanwhile): timed refreshes
  // are held back while revealing, and a reveal that selected nothing is done again.
  const held = lab.resourcesTree.holdRefreshes();
  try {
    const tree = lab.resourcesTree;
    const view = lab.resourcesView;
    const r = await revealUntilSelected<ResourceNode>(
      {
        resolve: () => {
          tree.flush();
          return tree.nodeFor(t.resource, t.key);
        },
        reveal: (node) => view.reveal(node, { select: true, focus: true, expand: true }),
        isSelected: (node) => view.selection.some((n) => n.id === node.id),
        onDidChangeSelection: (listener) => view.onDidChangeSelection(listener),
      },
      lab.clock,
      { attempts: REVEAL_ATTEMPTS, confirmMs: REVEAL_CONFIRM_MS },
    );
    if (!r) return fail('notFound', `${t.resource} ${t.key} is not in the Resources view (not watched, or gone).`);
    return { ok: true, id: r.node.id };
  } finally {
    held.dispose();
  }
}

/** Reveals tried before revealObject stops waiting for the selection (the last one's is then up to VS Code). */
const REVEAL_ATTEMPTS = 3;
/** How long a reveal's selection may take to reach this process (renderer → extension host) before it counts as dropped. */
const REVEAL_CONFIRM_MS = 1500;

/**
 * Inspect cache vs server: a diff editor of a cached copy against a fresh GET. The cached copy is the one the loop in
 * the views reconciles from: a Go controller's own cache (read from the program through the bridge) while the views
 * show one, else Reconcile Lab's informer. When the Go program does not cache that resource (or the key is outside
 * its cache), the informer's copy is shown and a message says why; `cache` in the result names the copy compared.
 */
export async function inspectCache(
  lab: ReconcileLab,
  arg: unknown,
): Promise<CommandResult<{ key: string; state: CacheState; differs: boolean; cache: string; cachedResourceVersion?: string; serverResourceVersion?: string; resourceVersionLag?: number }>> {
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  const t = await resolveTarget(s, lab.clock.now(), arg, { title: 'Compare which object with the server?' });
  if (isFailure(t)) return t;
  const info = infoOf(s, t);
  if (isFailure(info)) return info;
  let cached = s.get(t.resource, t.key);
  let cache = 'Reconcile Lab\'s informer';
  let metadataOnly = false;
  let goTyped = false;
  const remote = remoteOf(s);
  if (remote) {
    try {
      const got = await remote.cachedObject(info, t.key);
      cached = got.object;
      metadataOnly = got.metadataOnly === true;
      goTyped = true;
      cache = `Go controller ${remote.name}'s cache${metadataOnly ? ' (metadata only)' : ''}`;
    } catch (e) {
      void ui.info(`Reconcile Lab: comparing Reconcile Lab's informer copy with the server instead of the Go controller's cache: ${(e as Error).message}`);
    }
  }
  const r = await inspectKey({ client: s.client, gvr: info, key: t.key, cached, metadataOnly, goTyped });
  // Secret values masked; a value that differs between cache and server shows as "*** (before)" / "*** (after)".
  const [cachedShown, serverShown] = displayPair(r.cached, r.server);
  // Named by kind and key: an Octopus and a ConfigMap both called team-a/inky (or two cluster-scoped kinds' "x") are
  // two documents and two titles, not one overwritten by the other.
  const name = `${info.kind}.${fileSafe(t.key)}`;
  const left = lab.documents.snapshot(`${name}.cache.yaml`, r.cached ? toYaml(cachedShown) : `# not in ${cache}\n`);
  const right = lab.documents.snapshot(`${name}.server.yaml`, r.server ? toYaml(serverShown) : '# not on the server (404)\n');
  if (boolArg(arg, 'open') !== false) {
    await vscode.commands.executeCommand('vscode.diff', left, right, inspectTitle(info.kind, remote ? cache : 'cache', r), { preview: true });
  }
  if (!r.differs) ui.statusMessage(`${t.key}: ${remote ? cache : 'the cache'} matches the server`, 5000, 'pass');
  return {
    ok: true,
    key: t.key,
    state: r.state,
    differs: r.differs,
    cache,
    ...(r.cachedResourceVersion ? { cachedResourceVersion: r.cachedResourceVersion } : {}),
    ...(r.serverResourceVersion ? { serverResourceVersion: r.serverResourceVersion } : {}),
    ...(r.resourceVersionLag !== undefined ? { resourceVersionLag: r.resourceVersionLag } : {}),
  };
}

/**
 * The Go programs connected through the bridge, as known owners of `obj`'s finalizers (those they added), with the
 * last reconcile of `key` by each controller of `resource`.
 */
function goKnownControllers(lab: ReconcileLab, obj: KubeObject | undefined, resource: string, key: string): KnownController[] {
  if (!obj) return [];
  const out: KnownController[] = [];
  for (const p of lab.go.bridge?.processes ?? []) {
    const controllers = p.controllers.map((c) => {
      const last = c.resourceId === resource ? lastReconcileOf(c.keyState(key)) : undefined;
      return { name: c.name, paused: c.status().paused, ...(c.resourceId ? { resource: c.resourceId } : {}), ...(last ? { lastReconcile: last } : {}) };
    });
    const k = goKnownController(
      { program: p.hello.program, pid: p.hello.pid, exited: p.liveness === 'exited', stoppedInDebugger: p.liveness === 'stoppedInDebugger', controllers },
      obj,
      resource,
    );
    if (k) out.push(k);
  }
  return out;
}

function dryRunSummary(s: Session, r: DryRunResult): string {
  return renderDryRun({
    key: r.key,
    reconciler: r.reconciler,
    resource: s.primaryResource ?? '',
    context: s.contextName,
    exec: r.reconciler.startsWith('exec:'),
    outcome: r.outcome,
    writes: r.actions.map((a) => ({ verb: a.verb, resource: a.resource, key: a.key, ...(a.subresource ? { subresource: a.subresource } : {}), ...(a.outcome === 'error' ? { error: String(a.error) } : {}), diff: a.diff, ...(a.warnings ? { warnings: a.warnings } : {}) })),
    ...(r.status ? { statusDiff: r.status.diff } : {}),
    ...(r.explanation ? { notes: r.explanation.notes } : {}),
  });
}

/**
 * Dry-run reconcile: runs the reconciler once with every write forced to
 * dryRun=All and shows the result, with each planned change as a diff inline,
 * in the one reusable result view. The action and its writes are journaled
 * (the writes with `dryRun: true`). `{ open: false }` skips the editor.
 */
export async function dryRunReconcileCommand(
  lab: ReconcileLab,
  arg: unknown,
): Promise<CommandResult<{ key: string; outcome: DryRunResult['outcome']; actions: Array<{ verb: string; resource: string; key: string; subresource?: string; outcome: string; diff: string }>; summary: string; uri?: string }>> {
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  const remote = remoteOf(s);
  if (remote) return remoteDryRun(lab, s, remote, arg);
  if (!s.reconciler || !s.primaryInfo) return fail(s.loopProblem?.reason === 'untrusted' ? 'untrusted' : 'noLoop', s.loopProblem?.message ?? 'No reconciler in this connection.');
  const t = await resolveTarget(s, lab.clock.now(), arg, { primaryOnly: true, title: 'Dry-run the reconcile of which key?' });
  if (isFailure(t)) return t;
  s.recordAction('dryRun', t.key, `dry-run reconcile of ${t.key} (every write dryRun=All)`);
  const r = await ui.progress({ location: vscode.ProgressLocation.Window, title: `Dry-run ${t.key}` }, () =>
    dryRunReconcile({ client: s.client, reconciler: s.reconciler!, primary: s.primaryInfo!, key: t.key, cache: s.cacheReader(), log: lab.log, clock: lab.clock }),
  );
  for (const a of r.actions) s.recordWrite({ ...a.record, dryRun: true }, t.key);
  const summary = dryRunSummary(s, r);
  const uri = lab.documents.view(DRY_RUN_VIEW, summary);
  if (boolArg(arg, 'open') !== false) await showResultView(uri);
  return {
    ok: true,
    key: r.key,
    outcome: r.outcome,
    actions: r.actions.map((a) => ({ verb: a.verb, resource: a.resource, key: a.key, ...(a.subresource ? { subresource: a.subresource } : {}), outcome: a.outcome, diff: a.diff })),
    summary,
    uri: uri.toString(),
  };
}

/**
 * This session's loop as the owner of `obj`'s finalizers (of resource `resource`), named short: a module reconciler
 * by its file relative to the workspace (`module:oven-reconciler.ts`), not its absolute path. Undefined when the
 * loop owns nothing there.
 */
function sessionLoopController(s: Session, resource: string, key: string): KnownController | undefined {
  if (!s.reconciler || !s.reconcilerRecipe) return undefined;
  const spec = s.reconcilerRecipe.spec;
  return loopKnownController({
    name: loopDisplayName(spec, s.reconciler.name, (p) => vscode.workspace.asRelativePath(p, false)),
    reconcilerKind: spec.kind,
    ownFinalizers: s.ownFinalizers,
    fieldManager: FIELD_MANAGER,
    state: s.loopState(),
    primary: resource === s.builtInPrimaryResource,
    // Its last reconcile of the key: one after the delete that left the finalizer is a reconciler bug.
    ...(resource === s.builtInPrimaryResource ? { keyState: s.keyState(key) } : {}),
  });
}

/** What happens to an object after finalizers were removed by hand. */
export type AfterRemoval = 'gone' | 'waitsForReconcile' | 'heldByOthers' | 'notDeleting' | 'dryRun';

/**
 * The next step after a removal, in words: gone; or still held by a finalizer of this session's own loop, which
 * removes it at the key's next reconcile (offered: step it); or still held by other owners; or not being deleted.
 */
export function afterRemoval(o: { key: string; deleted: boolean; dryRun: boolean; terminating: boolean; remaining: readonly string[]; ownFinalizers: readonly string[]; loop: 'running' | 'paused' | 'stopped'; primary: boolean }): { next: AfterRemoval; message: string } {
  if (o.dryRun) return { next: 'dryRun', message: 'Dry run: nothing was removed.' };
  if (o.deleted) return { next: 'gone', message: `${o.key} is gone: nothing held it any more, so its deletion completed.` };
  if (!o.terminating) return { next: 'notDeleting', message: `${o.key} is not being deleted, so it stays${o.remaining.length ? ` (remaining: ${o.remaining.join(', ')})` : ''}; its controller adds a removed finalizer back at its next reconcile.` };
  const ours = o.remaining.filter((f) => o.ownFinalizers.includes(f));
  const others = o.remaining.filter((f) => !o.ownFinalizers.includes(f));
  if (ours.length && !others.length && o.primary) {
    const when = o.loop === 'running' ? 'the running loop reconciles it shortly' : `the loop is ${o.loop}: step it to finish`;
    return { next: 'waitsForReconcile', message: `${o.key} waits for one more reconcile: this session's loop removes ${ours.join(', ')} after its cleanup, and then the object is gone (${when}).` };
  }
  return { next: 'heldByOthers', message: `${o.key} is still Terminating, held by ${o.remaining.join(', ')}${ours.length ? ` (${ours.join(', ')} is this session's loop's)` : ''}.` };
}

/**
 * Strip finalizers: the escape hatch for an object stuck in Terminating.
 * Diagnoses first (owners, whether they run, how long it has been
 * terminating), lets the person choose one finalizer or all, asks for modal
 * confirmation naming them and the consequence, then removes them guarded by
 * the resourceVersion that was shown (a concurrent change fails, nothing is
 * written). Every write goes to the journal and the output channel.
 *
 * Argument: a finalizer element, an object element, or `{ key, resource,
 * finalizer?, all?, dryRun?, confirmed? }`. `{ confirmed: true }` skips the
 * modal confirmation: an explicit opt-in for tests and scripts.
 */
export async function stripFinalizers(
  lab: ReconcileLab,
  arg: unknown,
): Promise<CommandResult<{ key: string; removed: string[]; remaining: string[]; deleted: boolean; dryRun: boolean; diagnosis: StuckDiagnosis; next: AfterRemoval; nextMessage: string }>> {
  const refused = refusePrivileged(arg, ['confirmed']);
  if (refused) return refused;
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  const t = await resolveTarget(s, lab.clock.now(), arg, { withFinalizers: true, title: 'Strip finalizers from which object?' });
  if (isFailure(t)) return t;
  const info = infoOf(s, t);
  if (isFailure(info)) return info;
  const { namespace, name } = splitKey(t.key);
  const loop = sessionLoopController(s, t.resource, t.key);
  const diag = await diagnoseStuck({
    client: s.client,
    gvr: info,
    ...(namespace ? { namespace } : {}),
    name,
    clock: lab.clock,
    knownControllers: [
      // A Go program connected through the bridge owns the finalizers its field manager added (listed first: the
      // built-in lab loop claims its finalizer by name, and the Go sample uses the same one).
      ...goKnownControllers(lab, s.get(t.resource, t.key), t.resource, t.key),
      // The built-in loop: the lab reconciler's finalizer by name; an exec or module reconciler's through its field
      // manager (it writes through Reconcile Lab's client), on objects of the loop's resource.
      ...(loop ? [loop] : []),
    ],
  });
  const loopName = loop?.name;
  const loopFinalizers = [...new Set([...s.ownFinalizers, ...diag.finalizers.filter((f) => f.knownOwner !== undefined && f.knownOwner === loopName).map((f) => f.finalizer)])];
  if (diag.finalizers.length === 0) return fail('notFound', `${t.key} has no finalizers.`);

  // Which finalizer(s).
  let chosen: FinalizerDiagnosis[];
  const named = t.finalizer ?? stringArg(arg, 'finalizer');
  if (named) {
    const f = diag.finalizers.find((x) => x.finalizer === named);
    if (!f) return fail('notFound', `${t.key} has no finalizer "${named}" (it has ${diag.finalizers.map((x) => x.finalizer).join(', ')}).`);
    chosen = [f];
  } else if (boolArg(arg, 'all') === true || diag.finalizers.length === 1) {
    chosen = diag.finalizers;
  } else if (arg !== undefined && isConfirmed(arg)) {
    return fail('invalidArgument', `Name the finalizer to remove ({ finalizer }) or pass { all: true }: ${t.key} has ${diag.finalizers.length}.`);
  } else {
    type Item = vscode.QuickPickItem & { pick: FinalizerDiagnosis[] };
    const items: Item[] = diag.finalizers.map((f) => ({
      label: f.finalizer,
      description: `owner running: ${f.running}`,
      detail: finalizerPickDetail(f),
      pick: [f],
    }));
    items.push({ label: `All ${diag.finalizers.length} finalizers`, description: 'every owner\'s cleanup is skipped', pick: diag.finalizers });
    // The facts (owners, evidence, age) are in the confirmation's detail; the picker only chooses.
    const p = await ui.pick(items, { title: `Remove which finalizer from ${t.key}?`, placeHolder: 'Choose one; the next dialog shows the diagnosis and asks to confirm', matchOnDetail: true });
    if (!p) return fail('cancelled', 'No finalizer chosen.');
    chosen = p.pick;
  }
  const dryRun = boolArg(arg, 'dryRun') === true;

  // Confirmation.
  if (!isConfirmed(arg)) {
    const what = chosen.length === 1 ? `finalizer "${chosen[0]!.finalizer}"` : `all ${chosen.length} finalizers`;
    // The same formatting and clock as the tree row and its tooltip ("Terminating 4m10s").
    const age = diag.deletionTimestamp ? `Terminating ${ageOf(diag.deletionTimestamp, lab.clock.now()) ?? '?'} (deletion requested at ${diag.deletionTimestamp}).` : undefined;
    const detail = stripConfirmDetail({ key: t.key, diag, chosen, age, dryRun });
    const button = chosen.length === 1 ? 'Remove Finalizer' : 'Remove Finalizers';
    const answer = await ui.confirmModal(`Remove ${what} from ${diag.kind ?? t.resource} ${t.key}?`, detail, button);
    if (answer !== button) return fail('cancelled', 'Finalizer removal cancelled.');
  }

  s.recordAction('stripFinalizers', t.key, `${chosen.map((f) => f.finalizer).join(', ')}${dryRun ? ' (dry run)' : ''}`);
  try {
    const r = await removeFinalizers({
      client: s.client,
      gvr: info,
      ...(namespace ? { namespace } : {}),
      name,
      // One finalizer by name; several means all of them (the only multi-choice offered).
      ...(chosen.length === 1 ? { finalizer: chosen[0]!.finalizer } : {}),
      ...(diag.resourceVersion ? { expectedResourceVersion: diag.resourceVersion } : {}),
      dryRun,
      onWrite: (w) => s.recordWrite(w, t.key),
      clock: lab.clock,
      log: lab.log,
    });
    lab.log.warn('finalizers removed by hand', { object: `${t.resource} ${t.key}`, removed: r.removed, remaining: r.remaining, deleted: r.deleted, dryRun: r.dryRun, resourceVersion: diag.resourceVersion });
    const after = afterRemoval({
      key: t.key,
      deleted: r.deleted,
      dryRun: r.dryRun,
      terminating: diag.terminating,
      remaining: r.remaining,
      ownFinalizers: loopFinalizers,
      loop: s.loopState(),
      primary: t.resource === s.primaryResource,
    });
    const removed = `${r.removed.join(', ')} ${r.dryRun ? 'would be removed' : 'removed'}.`;
    // Say what happens next, and offer it: step the key whose own finalizer is left (when the loop does not run).
    const offer = after.next === 'waitsForReconcile' && s.loopState() !== 'running' ? `Step ${t.key}` : after.next === 'gone' ? undefined : 'Reveal';
    void ui.info(`Reconcile Lab: ${removed} ${after.message}`, ...(offer ? [offer] : [])).then((c) => {
      // As if the person chose Step on the object's row (a key still waiting for a backoff asks first).
      if (c === offer && after.next === 'waitsForReconcile') void stepReconcile(lab, { type: 'object', key: t.key, resource: t.resource });
      else if (c === offer) void vscode.commands.executeCommand('reconcileLab.revealObject', { key: t.key, resource: t.resource });
    });
    return { ok: true, key: r.key, removed: r.removed, remaining: r.remaining, deleted: r.deleted, dryRun: r.dryRun, diagnosis: diag, next: after.next, nextMessage: after.message };
  } catch (e) {
    if (e instanceof ObjectChangedError) {
      // "Refresh and retry" names nothing to click in the editor: offer the retry, which reads the object afresh and
      // asks again with its new state (a concurrent writer may have removed the finalizer, or added another).
      const retry = 'Strip Finalizers Again…';
      void ui.warn(`Reconcile Lab: ${e.message}`, retry).then(async (c) => {
        if (c !== retry) return;
        // As the person's own command: a failure (the object gone meanwhile, no finalizers left) is shown, not dropped.
        const mark = ui.shownMark();
        const again = await stripFinalizers(lab, { key: t.key, resource: t.resource, ...(named ? { finalizer: named } : {}) }).catch((err: unknown) => fail('error', (err as Error).message));
        if (isFailure(again) && again.reason !== 'cancelled' && ui.shownSince(mark).length === 0) void ui.warn(`Reconcile Lab: ${again.message}`);
      });
      return fail('error', e.message);
    }
    throw e;
  }
}

/**
 * Delete: asks the API server to delete the object and returns at once, without waiting for finalizers (like
 * `kubectl delete --wait=false`): an object with finalizers then shows as Terminating until their owners remove
 * them (or Strip Finalizers does). A modal confirmation names the object, its finalizers and what happens; the
 * delete carries a uid precondition, so a re-created object of the same name is never deleted by mistake.
 * Argument: a tree element or `{ key, resource }`, with `{ confirmed: true }` to skip the confirmation (tests,
 * scripts) and `{ dryRun: true }` to ask the server only.
 */
export async function deleteObject(
  lab: ReconcileLab,
  arg: unknown,
): Promise<CommandResult<{ key: string; resource: string; terminating: boolean; finalizers: string[]; dryRun: boolean; message: string }>> {
  const refused = refusePrivileged(arg, ['confirmed']);
  if (refused) return refused;
  const s = requireSession(lab, arg);
  if (isFailure(s)) return s;
  const t = await resolveTarget(s, lab.clock.now(), arg, { title: 'Delete which object?' });
  if (isFailure(t)) return t;
  const info = infoOf(s, t);
  if (isFailure(info)) return info;
  const { namespace, name } = splitKey(t.key);
  const cached = s.get(t.resource, t.key);
  const current = cached ?? (await s.client.get(info, namespace, name).catch(() => undefined));
  if (!current) return fail('notFound', `${t.resource} ${t.key} does not exist.`);
  const what = `${current.kind ?? info.kind} ${t.key}`;
  if (current.metadata.deletionTimestamp) {
    const message = `${what} is already being deleted (Terminating ${ageOf(current.metadata.deletionTimestamp, lab.clock.now()) ?? ''}); what holds it: ${(current.metadata.finalizers ?? []).join(', ') || 'nothing'}.`;
    if (arg === undefined || !isConfirmed(arg)) void ui.info(`Reconcile Lab: ${message}`);
    return fail('invalidArgument', message);
  }
  const finalizers = current.metadata.finalizers ?? [];
  const dryRun = boolArg(arg, 'dryRun') === true;
  // The finalizers this session's own loop owns (by name, or added by its field manager): they wait for the loop.
  const loop = sessionLoopController(s, t.resource, t.key);
  const own: LoopFinalizers | undefined = loop
    ? { owned: finalizers.filter((f) => knownOwnerOf([loop], f, managersOfFinalizer(current.metadata.managedFields, f)) !== undefined), loop: s.loopState() }
    : undefined;
  if (!isConfirmed(arg)) {
    const detail = [
      deleteConfirmFinalizers(finalizers, own),
      'Objects it owns are garbage-collected in the background.',
      `Guarded by its uid ${current.metadata.uid ?? '?'}: a re-created object of the same name is not deleted.${dryRun ? ' (Dry run: nothing is deleted.)' : ''}`,
    ].join('\n\n');
    const answer = await ui.confirmModal(`Delete ${what}?`, detail, 'Delete');
    if (answer !== 'Delete') return fail('cancelled', 'Delete cancelled.');
  }
  s.recordAction('delete', t.key, `${what}${finalizers.length ? `, finalizers ${finalizers.join(', ')}` : ''}${dryRun ? ' (dry run)' : ''}`);
  const answer = await s.client.delete(info, namespace, name, { dryRun, ...(current.metadata.uid ? { preconditions: { uid: current.metadata.uid } } : {}) });
  const terminating = Boolean(answer?.metadata?.deletionTimestamp);
  s.recordWrite(
    {
      verb: 'delete',
      gvr: info,
      ...(namespace ? { namespace } : {}),
      name,
      key: t.key,
      dryRun,
      ...(current.metadata.resourceVersion ? { resourceVersionBefore: current.metadata.resourceVersion } : {}),
      ...(answer?.metadata?.resourceVersion ? { resourceVersionAfter: answer.metadata.resourceVersion } : {}),
      outcome: 'ok',
      startedAt: lab.clock.now(),
      durationMs: 0,
    },
    t.key,
  );
  lab.log.info('deleted by hand', { object: `${t.resource} ${t.key}`, finalizers, terminating, dryRun });
  const message = dryRun
    ? `Dry run: the server would delete ${what}${finalizers.length ? ` (it would stay Terminating until ${finalizers.join(', ')} ${finalizers.length === 1 ? 'is' : 'are'} removed)` : ''}.`
    : terminating
      ? deletedTerminatingMessage(what, finalizers, own)
      : `${what} is deleted.`;
  if (!isConfirmed(arg)) {
    const action = terminating && !dryRun ? 'Reveal' : undefined;
    void ui.info(`Reconcile Lab: ${message}`, ...(action ? [action] : [])).then((c) => {
      if (c) void vscode.commands.executeCommand('reconcileLab.revealObject', { key: t.key, resource: t.resource });
    });
  }
  return { ok: true, key: t.key, resource: t.resource, terminating, finalizers, dryRun, message };
}
