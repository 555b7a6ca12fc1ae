/**
 * Text bound for a terminal. A reconciler's output (an exec program's `log` lines and `error`, a server
 * message, an object's fields) can carry escape sequences that move the cursor, rewrite earlier lines, set the
 * window title or (in some terminals) write files or answer back. Before anything reaches the CLI's stdout or
 * stderr, every C0 control character except line feed and tab, DEL and every C1 control (0x80–0x9f: 0x9b is a
 * one-byte CSI) is written as `\u00XX` — readable, and still a valid escape inside a JSON string, so `--json`
 * output stays parseable.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** `text` with terminal control characters escaped as `\u00XX` (newlines and tabs kept). */
export function escapeControlChars(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
