/**
 * Markdown built from cluster text (object names, reasons, server error messages, a reconciler's notes). Such
 * text must read as itself: no link, image, HTML, heading, emphasis or table cell can come out of it. Used by the
 * reconcile report and the dry-run summary.
 */

/**
 * `text` escaped for Markdown inline text (after a prefix, never at the start of a line): `\`, backticks,
 * emphasis (`*`, `_`, `~`), brackets (so no link or image can form), and `|` (table cells) are backslash-escaped;
 * `<` and `&` become entities (no HTML, no `<scheme:…>` autolink); line breaks become spaces. The autolinks that
 * renderers add to plain text (GitHub's and marked's GFM extension, the `linkify` of VS Code's Markdown preview) are
 * broken by one backslash each: a `:` followed by anything but a space (`https\://`, `mailto\:`), the first `/` of
 * `//`, `@` (e-mail addresses) and the `.` after `www`. Other punctuation stays readable in the raw text.
 */
export function escapeMarkdown(text: string): string {
  return String(text)
    .replace(/\r\n?|\n/g, ' ')
    .replace(/[\\`*_[\]|~@]|:(?=\S)|\/(?=\/)|(?<=\bwww)\./gi, (c) => `\\${c}`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;');
}

/** `text` as an inline code span whose fence is longer than any backtick run inside it. */
export function codeSpan(text: string): string {
  const t = String(text).replace(/\r\n?|\n/g, ' ');
  const longest = Math.max(0, ...[...t.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(longest + 1);
  const pad = t.startsWith('`') || t.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${t}${pad}${ticks}`;
}

/** `text` as a fenced code block whose fence is longer than any backtick run inside it (at least three). */
export function fence(lang: string, text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = '`'.repeat(Math.max(3, longest + 1));
  return `${ticks}${lang}\n${text}\n${ticks}`;
}
