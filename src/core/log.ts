/**
 * Logging, injected. The host provides a sink (a VS Code LogOutputChannel, the
 * CLI's stderr, a test collector). Fields are structured; a sink formats them.
 *
 * Never pass credentials in fields: {@link redact} is applied by sinks, but the
 * rule is not to log them in the first place.
 */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export type LogFields = Record<string, unknown>;

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

/** Formats an entry as one line: `LEVEL msg key=value …` with redaction applied. */
export function formatLogLine(level: LogLevel, msg: string, fields: LogFields): string {
  // A string with whitespace or quotes is JSON-quoted, so a multi-line error stays on its one line.
  const parts = Object.entries(redact(fields) as LogFields).map(([k, v]) => `${k}=${typeof v === 'string' && !/[\s"]/.test(v) ? v : JSON.stringify(v)}`);
  return `${level.toUpperCase()} ${msg.replace(/\r?\n/g, '\\n')}${parts.length ? ' ' + parts.join(' ') : ''}`;
}
