/**
 * The bridge wire protocol between a Go controller-runtime process (the Go
 * package `bridge/`) and the editor, as TypeScript types plus a runtime
 * descriptor that validates every incoming line.
 *
 * The protocol is defined once, in `bridge/protocol.json`: {@link PROTOCOL}
 * mirrors its `version`, `env`, `types` and `messages` field by field, and a
 * unit test (test/unit/bridge/protocol.test.ts) fails when the two differ.
 *
 * Framing: one JSON object per line (NDJSON). Every message carries its name
 * in the field {@link TYPE_FIELD} (`{"type":"hello", …}`). Field notation:
 * `string`, `int` (a JSON integer), `number`, `bool`, `object` (any JSON
 * object), `any`, `T[]`, or a type name under `types`/`messages`; a trailing
 * `?` marks an optional field. Unknown fields are ignored (the protocol grows
 * additively); a missing required field or a field of the wrong type is an
 * error naming the message and the field.
 */

import { SCRATCH_LABEL, SCRATCH_NAMESPACE_PREFIX } from '../checks/scratch.ts';

/** Mirrors bridge/protocol.json (checked by a test). */
export const PROTOCOL = {
  version: 2,
  /** Every line: the message's fields plus this envelope (the message name in "type"). */
  envelope: { type: 'string' },
  /** Queue transitions; in a "transitions" item a transition is its index here. */
  transitions: ['added', 'waiting', 'ready', 'processing', 'done', 'forgotten', 'backoff', 'shutdown'],
  /**
   * The cause of an add now that no informer event dispatched; a "transitions"
   * item carries it as `plainCause: true` (at = the item's at).
   */
  plainCause: { kind: 'watch', note: 'added outside an informer event (a channel source or the program itself)' },
  env: {
    address: 'RECONCILE_LAB_BRIDGE',
    token: 'RECONCILE_LAB_BRIDGE_TOKEN',
    /** A check instance over one scratch namespace (robustness checks; see protocol.json "$check"). */
    checkNamespace: 'RECONCILE_LAB_CHECK_NAMESPACE',
    /** Crash after write i: every write after the i-th successful persisted one blocks before reaching the server. */
    checkHoldAfterWrites: 'RECONCILE_LAB_CHECK_HOLD_AFTER_WRITES',
    /** Stale cache: the manager's cache lists at exactly this resourceVersion and does not watch until "thaw". */
    checkFreezeCacheAt: 'RECONCILE_LAB_CHECK_FREEZE_CACHE_AT',
    /** A cluster-scoped primary's scratch copy (JSON group, version, kind, resource, name): the only object of its kind the instance sees and may write outside its namespace. */
    checkClusterObject: 'RECONCILE_LAB_CHECK_CLUSTER_OBJECT',
    /** With checkFreezeCacheAt: only these resources ("resource" or "resource.group", comma-separated) are frozen. */
    checkFreezeResources: 'RECONCILE_LAB_CHECK_FREEZE_RESOURCES',
    /** A dry-run process: every write through the bridge client is dryRun=All, and one without the bridge client stops (protocol.json "$dryRunOnly"). */
    dryRunOnly: 'RECONCILE_LAB_DRY_RUN_ONLY',
  },
  /**
   * The robustness checks' scratch copies (core/checks/scratch.ts): an attached program that is not a check instance
   * never passes their informer events to its handlers, so its queue never holds their keys.
   */
  scratch: { namespacePrefix: SCRATCH_NAMESPACE_PREFIX, label: SCRATCH_LABEL },
  types: {
    Cause: {
      kind: 'string',
      event: 'string?',
      resource: 'string?',
      objectKey: 'string?',
      objectKind: 'string?',
      resourceVersion: 'string?',
      generation: 'int?',
      deletionRequested: 'bool?',
      initial: 'bool?',
      afterMs: 'int?',
      failures: 'int?',
      delayMs: 'int?',
      action: 'string?',
      note: 'string?',
      at: 'int',
    },
    Result: { requeueAfterMs: 'int?', requeue: 'bool?', priority: 'int?' },
    Write: {
      verb: 'string',
      group: 'string',
      version: 'string',
      resource: 'string',
      kind: 'string?',
      namespace: 'string?',
      name: 'string',
      subresource: 'string?',
      resourceVersionBefore: 'string?',
      resourceVersionAfter: 'string?',
      dryRun: 'bool',
      error: 'string?',
      before: 'object?',
      after: 'object?',
      patch: 'string?',
      patchType: 'string?',
      selector: 'string?',
      warnings: 'string[]?',
      deleted: 'bool?',
    },
    QueueExtra: { dueAt: 'int?', delayMs: 'int?', failures: 'int?', causes: 'Cause[]?', plainCause: 'bool?' },
    CacheSelector: { namespace: 'string', label: 'string?', field: 'string?' },
  },
  messages: {
    hello: { protocol: 'int', token: 'string', pid: 'int', program: 'string', goVersion: 'string', controllerRuntime: 'string', instance: 'string' },
    welcome: { protocol: 'int', paused: 'bool' },
    reject: { reason: 'string' },
    controller: {
      name: 'string',
      group: 'string?',
      version: 'string?',
      kind: 'string?',
      resource: 'string?',
      priorityQueue: 'bool',
      maxConcurrentReconciles: 'int?',
      leaderElection: 'bool?',
      reconciliationTimeoutMs: 'int?',
      paused: 'bool',
      cacheNamespaces: 'string[]?',
      cacheLabelSelector: 'string?',
      cacheFieldSelector: 'string?',
      cacheSelectors: 'CacheSelector[]?',
      cacheScopeUnknown: 'string?',
      requestType: 'string?',
      noSetup: 'bool?',
      order: 'int?',
      hints: 'string[]?',
      declared: 'int?',
    },
    queue: {
      controller: 'string',
      key: 'string',
      transition: 'string',
      priority: 'int?',
      dueAt: 'int?',
      delayMs: 'int?',
      failures: 'int?',
      causes: 'Cause[]?',
      at: 'int',
    },
    /** A run of one controller's queue transitions; expanded by {@link TransitionFrames} into "queue" messages. */
    transitions: { controller: 'string', keysReset: 'bool?', keys: 'any[]?', t0: 'int', items: 'any[]' },
    reconcileStart: { controller: 'string', key: 'string', reconcileID: 'string', triggers: 'Cause[]', dryRun: 'bool', at: 'int' },
    reconcileEnd: {
      controller: 'string',
      key: 'string',
      reconcileID: 'string',
      durationMs: 'int',
      result: 'Result?',
      error: 'string?',
      terminal: 'bool?',
      panic: 'string?',
      dryRun: 'bool',
      at: 'int',
    },
    write: { controller: 'string?', key: 'string?', reconcileID: 'string?', write: 'Write', at: 'int' },
    ping: { at: 'int' },
    informers: { resources: 'string[]' },
    command: { id: 'int', op: 'string', controller: 'string', key: 'string?', force: 'bool?', resource: 'string?' },
    reply: { id: 'int', ok: 'bool', error: 'string?', reconcile: 'reconcileEnd?', writes: 'Write[]?', snapshot: 'object?', withheld: 'int?', object: 'object?', metadataOnly: 'bool?' },
  },
} as const;

export type MessageName = keyof typeof PROTOCOL.messages;

/** The field that names a message (the envelope's one field). */
export const TYPE_FIELD = Object.keys(PROTOCOL.envelope)[0] as 'type';

// ---- TypeScript shapes (the same fields as the descriptor) ------------------------------------

export interface Cause {
  /** informer | owned | watch | requeueAfter | backoff | manual | result */
  kind: string;
  /** add | update | delete | generic */
  event?: string;
  /** plural.version.group of the object whose event caused it */
  resource?: string;
  objectKey?: string;
  /** the kind of that object (ConfigMap), when the Go side's cache knows it */
  objectKind?: string;
  resourceVersion?: string;
  generation?: number;
  /** An update that set metadata.deletionTimestamp (a delete of an object with finalizers). */
  deletionRequested?: boolean;
  initial?: boolean;
  afterMs?: number;
  failures?: number;
  delayMs?: number;
  action?: string;
  note?: string;
  at: number;
}

export interface WireResult {
  requeueAfterMs?: number;
  requeue?: boolean;
  priority?: number;
}

export interface WireWrite {
  /** create | update | patch | apply | delete | deleteAllOf */
  verb: string;
  group: string;
  version: string;
  resource: string;
  kind?: string;
  namespace?: string;
  name: string;
  subresource?: string;
  resourceVersionBefore?: string;
  resourceVersionAfter?: string;
  dryRun: boolean;
  error?: string;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
  patch?: string;
  patchType?: string;
  /** deleteAllOf only: its label and field selectors, comma-separated (absent: every object in its scope). */
  selector?: string;
  /** The server's warnings about the write (HTTP Warning headers, code 299): `unknown field "spec.x"` names a field it dropped. */
  warnings?: string[];
  /** The write removed the last finalizer of a Terminating object: the server deleted it (a dry run: would). */
  deleted?: boolean;
}

export interface HelloMessage { type: 'hello'; protocol: number; token: string; pid: number; program: string; goVersion: string; controllerRuntime: string; instance: string }
export interface WelcomeMessage { type: 'welcome'; protocol: number; paused: boolean }
export interface RejectMessage { type: 'reject'; reason: string }
export interface ControllerMessage {
  type: 'controller';
  name: string;
  group?: string;
  version?: string;
  kind?: string;
  resource?: string;
  priorityQueue: boolean;
  maxConcurrentReconciles?: number;
  leaderElection?: boolean;
  reconciliationTimeoutMs?: number;
  paused: boolean;
  /** The namespaces the manager's cache watches for the controller's kind; absent: every namespace (or not known). */
  cacheNamespaces?: string[];
  /**
   * The label / field selector the manager's cache lists the controller's kind with where no `cacheSelectors` entry
   * applies: cluster-scoped objects, and every namespace when `cacheSelectors` is absent. Absent: none.
   */
  cacheLabelSelector?: string;
  cacheFieldSelector?: string;
  /** The selectors per watched namespace (namespace "": every namespace not listed, cache.AllNamespaces). */
  cacheSelectors?: CacheSelector[];
  /** Why the bridge cannot tell what the cache holds of the kind; the other cache fields are then absent. */
  cacheScopeUnknown?: string;
  /**
   * The Go type of the controller's requests when it is a custom request type (not reconcile.Request), e.g.
   * "main.ClusterRequest". Its keys are then texts the bridge rendered for its items ("shop/cart (Cluster=eu-1)"),
   * not object keys: the editor passes them back verbatim and the Go side refuses a text none of its items had.
   */
  requestType?: string;
  /** The manager's client is not the bridge client (no bridge.Setup before ctrl.NewManager): no write journal, no causes, no dry-run. */
  noSetup?: boolean;
  /**
   * Ways the program wired the controller to the bridge that work but differ from what it says (a name given to
   * bridge.Options or bridge.Wrap that is not the controller's), each a sentence ending with the fix. A
   * re-announcement repeats the earlier ones and may add one; each is said once.
   */
  hints?: string[];
  /**
   * The controller's place in the program: 1 for the process's first `bridge.Options` (or `bridge.NewQueue`) call,
   * 2 for the next… — the order the program sets its controllers up. Controllers are announced in any order (the
   * manager starts them in parallel); a command following one by default takes the lowest place. Absent: not known.
   */
  order?: number;
  /**
   * How many controllers the program had set up when this was sent (`bridge.Options` / `bridge.NewQueue` calls): a
   * manager sets every controller up before it starts any, so once places 1…declared were all announced, no other
   * controller of the process is coming. Absent: not known.
   */
  declared?: number;
}
/** The label and field selector a manager's cache lists a controller's kind with in one namespace. */
export interface CacheSelector {
  namespace: string;
  label?: string;
  field?: string;
}
export type QueueTransitionName = 'added' | 'waiting' | 'ready' | 'processing' | 'done' | 'forgotten' | 'backoff' | 'shutdown';
export interface QueueMessage {
  type: 'queue';
  controller: string;
  key: string;
  /** added | waiting | ready | processing | done | forgotten | backoff | shutdown (others are ignored) */
  transition: string;
  priority?: number;
  dueAt?: number;
  delayMs?: number;
  failures?: number;
  causes?: Cause[];
  at: number;
}
/** One frame of queue transitions as it arrives (see protocol.json messages.transitions). */
export interface TransitionsMessage { type: 'transitions'; controller: string; keysReset?: boolean; keys?: unknown[]; t0: number; items: unknown[] }
export interface ReconcileStartMessage { type: 'reconcileStart'; controller: string; key: string; reconcileID: string; triggers: Cause[]; dryRun: boolean; at: number }
export interface ReconcileEndMessage {
  type?: 'reconcileEnd';
  controller: string;
  key: string;
  reconcileID: string;
  durationMs: number;
  result?: WireResult;
  error?: string;
  terminal?: boolean;
  panic?: string;
  dryRun: boolean;
  at: number;
}
export interface WriteMessage { type: 'write'; controller?: string; key?: string; reconcileID?: string; write: WireWrite; at: number }
export interface PingMessage { type: 'ping'; at: number }
/** Every resource the program's cache has an informer for ("plural.version.group", sorted). */
export interface InformersMessage { type: 'informers'; resources: string[] }
/**
 * Every command op (protocol.json's command `$op`, checked by a unit test). thaw / withhold / release: only for
 * check instances (robustness checks), see protocol.json.
 */
export const COMMAND_OPS = ['pause', 'resume', 'step', 'resetBackoff', 'reconcileNow', 'dryRun', 'snapshot', 'thaw', 'withhold', 'release', 'cacheGet'] as const;
export type CommandOp = (typeof COMMAND_OPS)[number];
export interface CommandMessage { type: 'command'; id: number; op: CommandOp; controller: string; key?: string; force?: boolean; resource?: string }
export interface ReplyMessage { type: 'reply'; id: number; ok: boolean; error?: string; reconcile?: ReconcileEndMessage; writes?: WireWrite[]; snapshot?: Record<string, unknown>; withheld?: number;
  /** cacheGet: the object as the program's cache holds it (absent: not in that cache). */
  object?: Record<string, unknown>;
  /** cacheGet: `object` is from a metadata-only informer (apiVersion, kind and metadata only). */
  metadataOnly?: boolean }

/** Every message the Go side sends, as the connection delivers it (a transitions frame arrives as its queue messages). */
export type FromGo = HelloMessage | ControllerMessage | QueueMessage | ReconcileStartMessage | (ReconcileEndMessage & { type: 'reconcileEnd' }) | WriteMessage | PingMessage | InformersMessage | ReplyMessage;
/** Every message the editor sends. */
export type FromEditor = WelcomeMessage | RejectMessage | CommandMessage;
export type BridgeMessage = FromGo | FromEditor;

/** A line from the Go side: any {@link FromGo} message or a transitions frame. */
export type FromGoLine = FromGo | TransitionsMessage;

const FROM_GO: ReadonlySet<string> = new Set(['hello', 'controller', 'queue', 'transitions', 'reconcileStart', 'reconcileEnd', 'write', 'ping', 'informers', 'reply']);

/** A line that is not a valid message: what was wrong, never a crash. */
export class ProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolError';
  }
}

const descriptors: Record<string, Record<string, string>> = { ...PROTOCOL.types, ...PROTOCOL.messages };

/**
 * Checks `value` against the fields of the type or message `typeName`;
 * returns the problem ("field x: expected int, got string") or undefined.
 */
export function checkFields(typeName: string, value: unknown, path = typeName): string | undefined {
  const fields = descriptors[typeName];
  if (!fields) return `${path}: unknown type ${typeName}`;
  if (!isObject(value)) return `${path}: expected an object, got ${describe(value)}`;
  for (const [field, spec] of Object.entries(fields)) {
    const optional = spec.endsWith('?');
    const t = optional ? spec.slice(0, -1) : spec;
    const v = value[field];
    if (v === undefined || v === null) {
      if (optional) continue;
      return `${path}.${field}: missing (expected ${t})`;
    }
    const problem = checkType(t, v, `${path}.${field}`);
    if (problem) return problem;
  }
  return undefined;
}

function checkType(t: string, v: unknown, path: string): string | undefined {
  if (t.endsWith('[]')) {
    if (!Array.isArray(v)) return `${path}: expected ${t}, got ${describe(v)}`;
    const inner = t.slice(0, -2);
    for (let i = 0; i < v.length; i++) {
      const p = checkType(inner, v[i], `${path}[${i}]`);
      if (p) return p;
    }
    return undefined;
  }
  switch (t) {
    case 'string':
      return typeof v === 'string' ? undefined : `${path}: expected string, got ${describe(v)}`;
    case 'int':
      return Number.isSafeInteger(v) ? undefined : `${path}: expected int, got ${describe(v)}`;
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? undefined : `${path}: expected number, got ${describe(v)}`;
    case 'bool':
      return typeof v === 'boolean' ? undefined : `${path}: expected bool, got ${describe(v)}`;
    case 'object':
      return isObject(v) ? undefined : `${path}: expected object, got ${describe(v)}`;
    case 'any':
      return undefined;
    default:
      return checkFields(t, v, path);
  }
}

/**
 * Parses one line from the Go side. Throws {@link ProtocolError} for
 * anything that is not a known, well-formed Go→editor message; the error's
 * message never contains a `token` value of the line.
 */
export function parseFromGo(line: string): FromGoLine {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    // The line's start helps tell what dialled (an HTTP client, another program), but a hello carries the bridge
    // token: its value never goes into the message (the reason reaches logs, notices and the CLI's output). V8's
    // JSON.parse messages quote the text around the error, so the message is that of the masked line.
    const masked = line.replace(/("token"\s*:\s*")(?:[^"\\]|\\.)*"?/g, '$1…"');
    let why = 'not valid JSON';
    try {
      JSON.parse(masked);
    } catch (e) {
      why = (e as Error).message;
    }
    throw new ProtocolError(`not JSON: ${why} (line starts ${JSON.stringify(masked.slice(0, 60))})`);
  }
  if (!isObject(v)) throw new ProtocolError(`expected a JSON object, got ${describe(v)}`);
  const type = v[TYPE_FIELD];
  if (typeof type !== 'string') throw new ProtocolError(`a message needs a string "${TYPE_FIELD}" field`);
  if (!FROM_GO.has(type)) throw new ProtocolError(`unknown message type ${JSON.stringify(type.slice(0, 40))}`);
  const problem = checkFields(type, v);
  if (problem) throw new ProtocolError(`invalid ${type} message: ${problem}`);
  return v as unknown as FromGoLine;
}

/** Result of expanding one transitions frame: its queue messages in order, and a problem per item skipped. */
export interface ExpandedFrame {
  messages: QueueMessage[];
  problems: string[];
}

/**
 * The editor's side of the Go side's transitions frames on one connection:
 * the key ids it defined (a key's text comes once per connection) and the
 * expansion of each frame into the "queue" messages it stands for, in order.
 *
 * Invariants: one instance per connection (ids start again at 1 on a new
 * one); `keysReset` clears the table before the frame's keys are read; a
 * malformed item (unknown transition or key id, wrong types) is skipped with a
 * problem naming it, and every other item of the frame is delivered.
 */
export class TransitionFrames {
  private readonly keys = new Map<number, string>();

  expand(m: TransitionsMessage): ExpandedFrame {
    const problems: string[] = [];
    if (m.keysReset) this.keys.clear();
    (m.keys ?? []).forEach((pair, i) => {
      if (!Array.isArray(pair) || pair.length !== 2 || !Number.isSafeInteger(pair[0]) || (pair[0] as number) < 1 || typeof pair[1] !== 'string') {
        problems.push(`transitions.keys[${i}]: expected [id ≥ 1, key string]`);
        return;
      }
      this.keys.set(pair[0] as number, pair[1]);
    });
    const messages: QueueMessage[] = [];
    const names = PROTOCOL.transitions;
    m.items.forEach((item, i) => {
      const where = `transitions.items[${i}]`;
      if (!Array.isArray(item) || item.length < 3 || item.length > 5) {
        problems.push(`${where}: expected [transition, keyId, dt, priority?, extra?]`);
        return;
      }
      const [code, id, dt, priority, extra] = item as unknown[];
      if (!Number.isSafeInteger(code) || (code as number) < 0 || (code as number) >= names.length) {
        problems.push(`${where}: transition must be an int below ${names.length}`);
        return;
      }
      if (!Number.isSafeInteger(id) || !Number.isSafeInteger(dt)) {
        problems.push(`${where}: keyId and dt must be ints`);
        return;
      }
      let key = '';
      if (id !== 0) {
        const k = this.keys.get(id as number);
        if (k === undefined) {
          problems.push(`${where}: key id ${String(id)} was never defined on this connection`);
          return;
        }
        key = k;
      }
      if (priority !== undefined && priority !== null && !Number.isSafeInteger(priority)) {
        problems.push(`${where}: priority must be an int or null`);
        return;
      }
      if (extra !== undefined) {
        const problem = checkFields('QueueExtra', extra, `${where}.extra`);
        if (problem) {
          problems.push(problem);
          return;
        }
      }
      const x = (extra ?? {}) as { dueAt?: number; delayMs?: number; failures?: number; causes?: Cause[]; plainCause?: boolean };
      const q: QueueMessage = { type: 'queue', controller: m.controller, key, transition: names[code as number]!, at: m.t0 + (dt as number) };
      if (typeof priority === 'number') q.priority = priority;
      if (x.dueAt !== undefined) q.dueAt = x.dueAt;
      if (x.delayMs !== undefined) q.delayMs = x.delayMs;
      if (x.failures !== undefined) q.failures = x.failures;
      if (x.causes !== undefined) q.causes = x.causes;
      else if (x.plainCause) q.causes = [{ ...PROTOCOL.plainCause, at: q.at }];
      messages.push(q);
    });
    return { messages, problems };
  }
}

/** Serialises a message for the wire (one line, newline-terminated). */
export function encode(msg: FromEditor | FromGo): string {
  return JSON.stringify(msg) + '\n';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number' && !Number.isInteger(v)) return 'non-integer number';
  return typeof v;
}
