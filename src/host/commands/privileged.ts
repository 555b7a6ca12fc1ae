/**
 * Command arguments that skip a safety check or a choice the person would otherwise make — `confirmed` (the
 * modal before removing finalizers), `kubeconfig` / `context` and the setting overrides of `connect` (a
 * kubeconfig can run exec credential plugins; a reconciler command runs code), `path` and `dryRun: false` of
 * `exportReport` (a file written anywhere; a live pass that writes to the cluster), `exportTo` of `showEventLog`,
 * `force` of `stepReconcile` (runs a key before its backoff without asking), `confirmCluster` of `runChecks` (checks on a cluster that is not the local control plane without typing its name), `resources` / `namespaces` of the
 * Choose… commands (workspace settings written without the picker), `command` / `args` / `env` / `cwd` of
 * `runController` (a program to run; `others`: stop or keep another window's run of it without asking), `uri` / `text` / `resolve` of `applyObjectEdit` (a write the person did not
 * choose) — are honoured only when the argument also
 * carries the **argument token** of this activation.
 *
 * The token is 32 random bytes made when the extension activates under its own test suite
 * (`ExtensionMode.Test`: a development host started with `extensionTestsPath`), and handed only to that suite
 * through the test-only API (src/host/activation.ts). In every other mode no token exists, so no caller — a
 * `command:` link in a notification, hover or Markdown preview, a task, another extension — can use these
 * arguments: the command refuses with `invalidArgument` and says which argument is refused. Menus and the palette
 * never pass them.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { fail, type Failure } from './args.ts';

/** The argument field that carries the token. */
export const TOKEN_FIELD = 'argumentToken';

let token: Buffer | undefined;

/** Makes this activation's token (test mode only) and returns it as hex. */
export function issueArgumentToken(): string {
  token = randomBytes(32);
  return token.toString('hex');
}

/** Forgets the token (deactivation). */
export function revokeArgumentToken(): void {
  token = undefined;
}

/** True when `arg` carries this activation's token. False whenever no token was issued. */
export function hasArgumentToken(arg: unknown): boolean {
  if (!token || typeof arg !== 'object' || arg === null) return false;
  const given = (arg as Record<string, unknown>)[TOKEN_FIELD];
  if (typeof given !== 'string' || !/^[0-9a-f]{64}$/.test(given)) return false;
  return timingSafeEqual(Buffer.from(given, 'hex'), token);
}

/**
 * A failure when `arg` sets any of `fields` (to anything but undefined) without the token; undefined when the
 * call may proceed. Handlers call it first, before reading those fields.
 */
export function refusePrivileged(arg: unknown, fields: readonly string[]): Failure | undefined {
  if (typeof arg !== 'object' || arg === null) return undefined;
  const record = arg as Record<string, unknown>;
  const used = fields.filter((f) => record[f] !== undefined);
  if (used.length === 0 || hasArgumentToken(arg)) return undefined;
  return fail(
    'invalidArgument',
    `The argument${used.length > 1 ? 's' : ''} ${used.map((f) => `"${f}"`).join(', ')} skip${used.length > 1 ? '' : 's'} a confirmation or choice and ${used.length > 1 ? 'are' : 'is'} honoured only from Reconcile Lab's own test suite, never from a command link, a task or another extension. Run the command without ${used.length > 1 ? 'them' : 'it'} and answer its prompts.`,
  );
}
