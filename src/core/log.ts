/**
 * Logging, injected. The host provides a sink (a VS Code LogOutputChannel, the
 * CLI's stderr, a test collector). Fields are structured; a sink formats them.
 *
 * Never pass credentials in fields: {@link redact} is applied by sinks, but the
 * rule is not to log them in the first place.
 */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export type LogFields = Record<string, unknown>;

/**
 * The field (`journaled: true`) of a log entry whose message is also a journal warning entry (a controller's
 * warning: hot loop, timeout, field fight…). A sink next to a view of the journal may leave it out, so that the
 * person does not read it twice (the CLI's text output, which prints the journal's warnings as ⚠ lines).
 */
export const JOURNALED_FIELD = 'journaled';

export interface Logger {
  trace(msg: string, fields?: LogFields): void;
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger whose entries carry `fields` in addition to their own. */
  child(fields: LogFields): Logger;
}

/** A sink receives one fully-formed entry. */
export type LogSink = (level: LogLevel, msg: string, fields: LogFields) => void;

export function createLogger(sink: LogSink, base: LogFields = {}): Logger {
  const emit = (level: LogLevel) => (msg: string, fields?: LogFields) =>
    sink(level, msg, fields ? { ...base, ...fields } : base);
  return {
    trace: emit('trace'),
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    child: (fields) => createLogger(sink, { ...base, ...fields }),
  };
}

/** Discards everything. */
export const nullLogger: Logger = createLogger(() => {});

const SECRET_KEYS = /^(token|password|client-key-data|client-key|bearer|authorization|secret|access-token|id-token|refresh-token)$/i;
const BEARER = /(Bearer\s+)[A-Za-z0-9._~+/=-]+/g;

/**
 * Returns a copy of `value` safe to log: values under credential-like keys are
 * replaced by "<redacted>" and bearer tokens inside strings are masked.
 */
export function redact(value: unknown, depth = 0): unknown {
  if (depth > 8) return '<…>';
  if (typeof value === 'string') return value.replace(BEARER, '$1<redacted>');
  if (value instanceof Error) return redact(value.message, depth + 1);
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = SECRET_KEYS.test(k) ? '<redacted>' : redact(v, depth + 1);
    return out;
  }
  return value;
}

/** Indent of a log message's continuation lines ({@link formatLogLine}). */
export const LOG_CONTINUATION = '    │ ';

/**
 * Formats an entry for a terminal: `LEVEL msg key=value …` with redaction applied.
 *
 * - Field values stay on the entry's first line: a string with whitespace or quotes is JSON-quoted (a multi-line
 *   error in a field is one quoted value, `error="exit 1\nstderr: x"`), so fields stay machine-splittable.
 * - The message is prose for a person: when it has several lines (a module's compile errors, one diagnostic per
 *   line) they are written as real lines, each continuation indented with {@link LOG_CONTINUATION} so it is read
 *   as part of the entry above it; fields come after the message's first line. A message never shows an escaped `\n`.
 */
export function formatLogLine(level: LogLevel, msg: string, fields: LogFields): string {
  // JOURNALED_FIELD is a marker for sinks (the entry is in the journal too), not something to show a person.
  const parts = Object.entries(redact(fields) as LogFields).filter(([k]) => k !== JOURNALED_FIELD).map(([k, v]) => `${k}=${typeof v === 'string' && !/[\s"]/.test(v) ? v : JSON.stringify(v)}`);
  const [first = '', ...rest] = msg.replace(/(\r?\n)+$/, '').split(/\r?\n/);
  return `${level.toUpperCase()} ${first}${parts.length ? ' ' + parts.join(' ') : ''}${rest.map((l) => `\n${LOG_CONTINUATION}${l}`).join('')}`;
}
