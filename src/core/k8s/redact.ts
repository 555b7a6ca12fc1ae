/**
 * Keeping credentials out of messages. A kubeconfig holds bearer tokens, passwords, client keys and
 * certificates; a parser's error about it quotes the lines around the mistake (js-yaml prints a code frame,
 * `JSON.parse` the start of the text). Those messages reach notifications, the output channel and the CLI's
 * stderr, so they are reduced to what locates the mistake (its first line, with the line:column) and anything
 * that still looks like a credential is masked.
 */

/** The mask put in place of a value. */
export const REDACTED = '[redacted]';

// Keys whose values are credentials, in kubeconfig (YAML or JSON) and auth-provider spelling.
const SECRET_KEYS = /((?:^|[\s{,"'])(?:token|id-token|refresh-token|access-token|password|client-key-data|client-key|client-certificate-data|certificate-authority-data|client-secret|secret|apiKey|api-key|auth)["']?\s*[:=]\s*)("[^"]*"|'[^']*'|[^\s,}]+)/gi;
// Long runs of base64 / hex / JWT characters (with a digit, or mixed case): keys, certificates and tokens whatever
// key they sit under. `/` is left out so that file paths stay readable.
const LONG_OPAQUE = /[A-Za-z0-9+_=.-]{24,}/g;
// Quoted text, which JSON.parse errors copy from the input.
const QUOTED = /"[^"\n]{12,}"/g;

/** `text` with credential-looking values (by key, or long opaque runs) masked. */
export function redactSecrets(text: string): string {
  return text
    .replace(SECRET_KEYS, (_m, key: string) => `${key}${REDACTED}`)
    .replace(LONG_OPAQUE, (run) => (/[0-9]/.test(run) || (/[A-Z]/.test(run) && /[a-z]/.test(run)) ? REDACTED : run))
    .replace(QUOTED, `"${REDACTED}"`);
}

/**
 * A parser error (YAML or JSON) about a file that may hold credentials, reduced to its first line (the
 * problem and its position; the code frame that follows quotes the file) and {@link redactSecrets redacted}.
 */
export function redactParserError(message: string): string {
  const first = message.split(/\r?\n/, 1)[0] ?? '';
  return redactSecrets(first.trim()).slice(0, 300);
}
