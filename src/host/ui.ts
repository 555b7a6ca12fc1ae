/**
 * The only place in src/host that shows text in VS Code's notifications, modal dialogs, quick picks, progress
 * notifications and the status bar's transient messages. Every string passed here goes through
 * {@link inert} (src/host/safeText.ts): text from a cluster, a program or a workspace can never become a
 * clickable `command:` link, an icon or a line break. Callers may interpolate freely; they never call
 * `vscode.window.show*Message`, `showQuickPick`, `withProgress` or `setStatusBarMessage` themselves (a unit test
 * scans src/host for that).
 *
 * What was shown is also kept in a small ring (the last {@link SHOWN_KEPT} texts, as shown) for the
 * extension-host tests, which read it through the test-only API of src/host/activation.ts.
 */
import * as vscode from 'vscode';
import { inert } from './safeText.ts';

export { inert, safe } from './safeText.ts';

/** One text shown to the person, after {@link inert}. */
export interface ShownText {
  readonly kind: 'info' | 'warning' | 'error' | 'modal' | 'quickPick' | 'progress' | 'status' | 'viewMessage';
  readonly text: string;
}

export const SHOWN_KEPT = 200;
const shown: ShownText[] = [];
/** How many texts were ever recorded: a mark that keeps counting after the oldest are dropped. */
let shownTotal = 0;

function record(kind: ShownText['kind'], ...texts: Array<string | undefined>): void {
  const text = texts.filter((t) => t !== undefined && t !== '').join('\n');
  shown.push({ kind, text });
  shownTotal++;
  if (shown.length > SHOWN_KEPT) shown.splice(0, shown.length - SHOWN_KEPT);
}

/** The last texts shown (oldest first, at most {@link SHOWN_KEPT}), as the person saw them. */
export function recentlyShown(): readonly ShownText[] {
  return shown.slice();
}

/** A mark for {@link shownSince}: the number of texts recorded so far (it does not stop at {@link SHOWN_KEPT}). */
export function shownMark(): number {
  return shownTotal;
}

/** The texts recorded after `mark` (from {@link shownMark}) that are still kept, oldest first. */
export function shownSince(mark: number): readonly ShownText[] {
  const dropped = shownTotal - shown.length;
  return shown.slice(Math.max(0, mark - dropped));
}

/** An information notification; resolves to the button clicked. Does not reject. */
export function info(message: string, ...buttons: string[]): Thenable<string | undefined> {
  const m = inert(message);
  record('info', m);
  return vscode.window.showInformationMessage(m, ...buttons.map((b) => inert(b)));
}

/** A warning notification; resolves to the button clicked. */
export function warn(message: string, ...buttons: string[]): Thenable<string | undefined> {
  const m = inert(message);
  record('warning', m);
  return vscode.window.showWarningMessage(m, ...buttons.map((b) => inert(b)));
}

/** An error notification; resolves to the button clicked. */
export function error(message: string, ...buttons: string[]): Thenable<string | undefined> {
  const m = inert(message);
  record('error', m);
  return vscode.window.showErrorMessage(m, ...buttons.map((b) => inert(b)));
}

/** A modal warning with a multi-line `detail`; resolves to the button clicked (undefined when dismissed). */
export function confirmModal(message: string, detail: string, ...buttons: string[]): Thenable<string | undefined> {
  const m = inert(message);
  const d = inert(detail, { multiline: true, max: 8000 });
  record('modal', m, d);
  return vscode.window.showWarningMessage(m, { modal: true, detail: d }, ...buttons.map((b) => inert(b)));
}

/** What a quick pick item shows; the other fields of the item are kept. */
function inertItem<T extends vscode.QuickPickItem>(item: T): T {
  return {
    ...item,
    label: inert(item.label),
    ...(item.description !== undefined ? { description: inert(item.description) } : {}),
    ...(item.detail !== undefined ? { detail: inert(item.detail) } : {}),
  };
}

function inertPickOptions(options: vscode.QuickPickOptions): vscode.QuickPickOptions {
  return {
    // A list of toggles stays open when focus moves (a notification, a click to read the tree), as input boxes do.
    ...(options.canPickMany ? { ignoreFocusOut: true } : {}),
    ...options,
    ...(options.title !== undefined ? { title: inert(options.title) } : {}),
    ...(options.placeHolder !== undefined ? { placeHolder: inert(options.placeHolder) } : {}),
  };
}

/**
 * A quick pick. Labels, descriptions, details, the title and the placeholder are made inert; use `iconPath`
 * for icons (a `$(name)` in a label is shown literally). A multi-select pick stays open when focus moves elsewhere
 * (unless `ignoreFocusOut` says otherwise): dismissing it takes Escape. Resolves to the original item(s) picked.
 */
export function pick<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions & { canPickMany: true }): Thenable<T[] | undefined>;
export function pick<T extends vscode.QuickPickItem>(items: readonly T[], options?: vscode.QuickPickOptions): Thenable<T | undefined>;
export function pick<T extends vscode.QuickPickItem>(items: readonly T[], options: vscode.QuickPickOptions = {}): Thenable<T | T[] | undefined> {
  const shownItems = items.map((item) => ({ item, view: inertItem(item) }));
  const o = inertPickOptions(options);
  record('quickPick', o.title, o.placeHolder, ...shownItems.map((x) => [x.view.label, x.view.description, x.view.detail].filter(Boolean).join(' · ')));
  const back = new Map<vscode.QuickPickItem, T>(shownItems.map((x) => [x.view, x.item]));
  const views = shownItems.map((x) => x.view);
  return vscode.window.showQuickPick(views, o).then((r: vscode.QuickPickItem | vscode.QuickPickItem[] | undefined) => {
    if (r === undefined) return undefined;
    return Array.isArray(r) ? r.map((x) => back.get(x)!) : back.get(r);
  });
}

/**
 * `vscode.window.withProgress` with an inert title and inert progress messages. `recordMessages`: its messages are
 * recorded as shown text too (a message a person must read, such as why Run Controller… still waits; not for
 * step-by-step progress, which would crowd the record).
 */
export function progress<R>(
  options: vscode.ProgressOptions & { recordMessages?: boolean },
  task: (progress: vscode.Progress<{ message?: string; increment?: number }>, token: vscode.CancellationToken) => Thenable<R>,
): Thenable<R> {
  const { recordMessages, ...rest } = options;
  const o = { ...rest, ...(rest.title !== undefined ? { title: inert(rest.title) } : {}) };
  record('progress', o.title);
  return vscode.window.withProgress(o, (p, token) =>
    task(
      {
        report: (v) => {
          const message = v.message !== undefined ? inert(v.message) : undefined;
          if (recordMessages && message) record('progress', message);
          p.report({ ...v, ...(message !== undefined ? { message } : {}) });
        },
      },
      token,
    ),
  );
}

/**
 * A transient status-bar message. `icon` is the extension's own codicon name (rendered); `text` is made inert.
 */
export function statusMessage(text: string, ms: number, icon?: string): vscode.Disposable {
  const t = inert(text);
  record('status', t);
  return vscode.window.setStatusBarMessage(`${icon ? `$(${icon}) ` : ''}${t}`, ms);
}

/** The text of a view's message line (TreeView.message), inert. */
export function viewMessage(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const t = inert(text);
  record('viewMessage', t);
  return t;
}

/**
 * An input box whose title, prompt and placeholder are made inert; `validate` returns a message (made inert) or
 * undefined. Resolves to the text entered, or undefined when dismissed.
 */
export function input(options: { title: string; prompt: string; placeHolder?: string; value?: string; validate?: (value: string) => string | undefined }): Thenable<string | undefined> {
  const title = inert(options.title);
  const prompt = inert(options.prompt);
  record('quickPick', title, prompt);
  const validate = options.validate;
  return vscode.window.showInputBox({
    title,
    prompt,
    ignoreFocusOut: true,
    ...(options.placeHolder !== undefined ? { placeHolder: inert(options.placeHolder) } : {}),
    ...(options.value !== undefined ? { value: inert(options.value) } : {}),
    ...(validate ? { validateInput: (v: string) => {
      const m = validate(v);
      return m === undefined ? undefined : inert(m);
    } } : {}),
  });
}
