import * as vscode from 'vscode';
import { createLogger, redact, type LogFields, type LogLevel, type Logger } from '../core/log.ts';
import { OUTPUT_CHANNEL_NAME } from './ids.ts';

/**
 * The extension's LogOutputChannel and the core {@link Logger} that writes to
 * it. The channel owns level filtering (the user picks it with "Developer: Set
 * Log Level"); fields are redacted before they are written.
 */
export interface Output extends vscode.Disposable {
  readonly channel: vscode.LogOutputChannel;
  readonly log: Logger;
}

function formatFields(fields: LogFields): string {
  const entries = Object.entries(redact(fields) as LogFields);
  if (entries.length === 0) return '';
  return ' ' + entries.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
}

export function createOutput(): Output {
  const channel = vscode.window.createOutputChannel(OUTPUT_CHANNEL_NAME, { log: true });
  const write: Record<LogLevel, (m: string) => void> = {
    trace: (m) => channel.trace(m),
    debug: (m) => channel.debug(m),
    info: (m) => channel.info(m),
    warn: (m) => channel.warn(m),
    error: (m) => channel.error(m),
  };
  const log = createLogger((level, msg, fields) => write[level](msg + formatFields(fields)));
  return { channel, log, dispose: () => channel.dispose() };
}
