/**
 * Text from outside the extension (server error messages — an admission webhook writes them —, an exec
 * program's `error`, object names, owner-reference kinds, field managers, workspace settings) is shown in
 * notifications, modal dialogs, quick picks, progress titles and status-bar text. VS Code turns
 * `[label](command:…)` (also `https:` and `file:`) in a notification into a clickable link that runs a command,
 * and `$(name)` into an icon. {@link inert} makes such text display as itself: nothing in it can become a link,
 * an icon or a line break, and it has a bounded length.
 *
 * Every string the host shows goes through {@link inert} (src/host/ui.ts does it for every call it wraps; a unit
 * test checks that src/host calls no `vscode.window.show*Message` / `showQuickPick` / `withProgress` /
 * `setStatusBarMessage` directly). Markdown (tooltips) takes cluster text only through
 * `MarkdownString.appendText`, which escapes it. This module imports nothing (unit-tested in plain Node).
 */

/** Longest text shown from one call; the rest is cut and marked with "…". */
export const MAX_SHOWN_CHARS = 2000;

/**
 * VS Code's own parser of links in notification text (`parseLinkedText`, src/vs/base/common/linkedText.ts),
 * applied after line breaks become spaces. {@link inert}'s output never matches it.
 */
export const VSCODE_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi;

// C0 (but tab), DEL, C1, bidi embeddings/overrides/isolates, line/paragraph separators, BOM / zero-width no-break.
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

function escapeChar(c: string): string {
  const code = c.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

function toText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.message;
  if (value === undefined) return '';
  try {
    return typeof value === 'object' ? JSON.stringify(value) : String(value);
  } catch {
    return String(value);
  }
}

/**
 * `value` as text that VS Code shows literally: `](` becomes `] (` (no link can form, whatever the scheme or
 * case), `$(` becomes `$ (` (no icon), line breaks become spaces (or stay, with `multiline`), tabs and other
 * control, bidi and zero-width characters are escaped (`\x1b`, `\u202e`), and the result is cut to `max`
 * characters. Non-strings are converted (an Error gives its message). Idempotent.
 */
export function inert(value: unknown, options: { multiline?: boolean; max?: number } = {}): string {
  const max = options.max ?? MAX_SHOWN_CHARS;
  let s = toText(value).replace(/\r\n?/g, '\n');
  s = options.multiline ? s : s.replace(/\n/g, ' ');
  s = s.replace(/\t/g, ' ').replace(INVISIBLE, escapeChar);
  // After the line breaks are gone, so "]\n(" cannot come back as "](" once VS Code replaces them.
  s = s.replace(/\]\s*\(/g, '] (').replace(/\$\(/g, '$ (');
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/**
 * A tagged template whose interpolated values go through {@link inert}:
 * `` safe`Remove ${finalizer} from ${key}?` ``. The literal parts are the extension's own text.
 */
export function safe(strings: TemplateStringsArray, ...values: unknown[]): string {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += inert(v) + (strings[i + 1] ?? '');
  });
  return out;
}

/** True when VS Code would render a link in `text` (after turning its line breaks into spaces). For tests and checks. */
export function rendersLink(text: string): boolean {
  VSCODE_LINK.lastIndex = 0;
  const found = VSCODE_LINK.test(text.replace(/(\r\n|\n|\r)/g, ' '));
  VSCODE_LINK.lastIndex = 0;
  return found;
}
