/**
 * Text bound for a terminal. A reconciler's output (an exec program's `log` lines and `error`, a server
 * message, an object's fields) can carry escape sequences that move the cursor, rewrite earlier lines, set the
 * window title or (in some terminals) write files or answer back. Before anything reaches the CLI's stdout or
 * stderr, every C0 control character except line feed and tab, DEL and every C1 control (0x80–0x9f: 0x9b is a
 * one-byte CSI) is written as `\u00XX` — readable, and still a valid escape inside a JSON string, so `--json`
 * output stays parseable. The invisible format characters that reorder or hide text where a terminal lays it out
 * (bidi embeddings, overrides and isolates, zero-width characters, line/paragraph separators, BOM) are written as
 * `\uXXXX` too, so a name or message cannot show as something other than what it is.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/** `text` with terminal control and invisible format characters escaped as `\uXXXX` (newlines and tabs kept). */
export function escapeControlChars(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
