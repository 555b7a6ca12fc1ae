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
 * `setStatusBarMessage` directly). Markdown (tooltips) takes such text only through {@link inertMarkdown}: VS Code's
 * own `MarkdownString.appendText` is not enough, since its renderer (marked, with GitHub's extensions) makes links of
 * bare URLs (`https://…`), `www.` names (a finalizer may be one), e-mail addresses and `<scheme:…>` autolinks in the
 * text it escapes. This module imports nothing (unit-tested in plain Node).
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

// Every ASCII punctuation character: CommonMark lets a backslash escape any of them, and an escaped one is literal.
const MARKDOWN_PUNCTUATION = /[!-/:-@[-`{-~]/g;
// VS Code's theme-icon syntax ($(name), $(name~spin)), rendered from the HTML a MarkdownString with supportThemeIcons gives.
const THEME_ICON = /\$\([A-Za-z0-9-]+(?:~[A-Za-z0-9-]+)?\)/g;

/**
 * `value` as Markdown source for a `vscode.MarkdownString` (a tooltip) that renders as the text itself, on one line:
 * every ASCII punctuation character is backslash-escaped, so no link (`[a](b)`, `<scheme:…>`, and none of the bare
 * URL, `www.` or e-mail autolinks VS Code's renderer adds), image, HTML, emphasis, code span, heading or list can
 * form; line breaks become spaces; control, bidi and zero-width characters are escaped visibly (`\x1b`, `\u202e`)
 * and the text is cut to `max` characters, as in {@link inert}. With `themeIcons` (the MarkdownString's
 * `supportThemeIcons`) `$(name)` is escaped for VS Code's icon pass too, so it reads as itself, not as an icon.
 */
export function inertMarkdown(value: unknown, options: { themeIcons?: boolean; max?: number } = {}): string {
  const max = options.max ?? MAX_SHOWN_CHARS;
  let s = toText(value).replace(/\r\n?|\n/g, ' ').replace(/\t/g, ' ').replace(INVISIBLE, escapeChar);
  if (s.length > max) s = `${s.slice(0, max - 1)}…`;
  // VS Code shows "\$(name)" in rendered HTML as "$(name)": the backslash is escaped too, below.
  if (options.themeIcons) s = s.replace(THEME_ICON, (icon) => `\\${icon}`);
  return s.replace(MARKDOWN_PUNCTUATION, (c) => `\\${c}`);
}

/** True when VS Code would render a link in `text` (after turning its line breaks into spaces). For tests and checks. */
export function rendersLink(text: string): boolean {
  VSCODE_LINK.lastIndex = 0;
  const found = VSCODE_LINK.test(text.replace(/(\r\n|\n|\r)/g, ' '));
  VSCODE_LINK.lastIndex = 0;
  return found;
}
