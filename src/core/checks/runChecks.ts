import type { CheckProgress, CheckReport, RunChecksOptions } from './types.ts';

/** Thrown (before anything is written) when the checks refuse to run: an unconfirmed non-local cluster, bad options. */
export class CheckRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckRefusedError';
  }
}

/**
 * Runs the robustness checks (see ./types.ts for the contract).
 * Work in progress: the implementation lands next; the signature is stable.
 */
export async function runChecks(options: RunChecksOptions, progress?: CheckProgress, signal?: AbortSignal): Promise<CheckReport> {
  void options;
  void progress;
  void signal;
  throw new Error('runChecks: not implemented yet');
}
