import type { ObjectKey } from '../k8s/keys.ts';
import type { KubeObject } from '../k8s/objects.ts';

/**
 * Field-manager fight detection: two writers (typically two controllers)
 * keep setting the same field of the same object to different values. The
 * server records who set each field last in `metadata.managedFields`; with
 * Update operations the ownership of a field moves to the writer that changed
 * it. So when ownership of one field flips back and forth between the same two
 * managers several times within a short window, they are fighting over it.
 *
 * Fed with the primary informer's update events (old, new object). Needs
 * `managedFields` in the cache: with the dropManagedFields transform on it
 * sees nothing and never warns.
 *
 * Pure: time comes with each observation (the controller passes its clock).
 */
export interface FieldFightOptions {
  /** The field manager this process writes with (the warning then says "another controller … this one"). */
  ownManager?: string;
  /** Flips of one field between the same two managers, within the window, that make a fight. Default 4 (two rounds). */
  threshold?: number;
  /** Window of the flips. Default 2 min. */
  windowMs?: number;
  /** No second warning for the same key, managers and field within this time. Default 5 min. */
  cooldownMs?: number;
}

export interface FieldFightWarning {
  key: ObjectKey;
  /** The field, as a path: `.spec.replicas`, `.metadata.labels.app`, `.spec.ports[port=80]`. */
  field: string;
  /** The two managers, the other one first when one of them is {@link FieldFightOptions.ownManager}. */
  managers: readonly [string, string];
  flips: number;
  spanMs: number;
  /** True when one of the two is this process's own manager. */
  involvesOwn: boolean;
  message: string;
}

interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsV1?: unknown;
}

interface Flip {
  at: number;
  from: string;
  to: string;
}

/** One path segment of a FieldsV1 key: `f:name` → `.name`, `k:{"port":80}` → `[port=80]`, `v:"x"` → `[x]`, `i:0` → `[0]`. */
function segment(k: string): string | undefined {
  if (k === '.') return undefined;
  const body = k.slice(2);
  switch (k.slice(0, 2)) {
    case 'f:':
      return `.${body}`;
    case 'k:': {
      try {
        const o = JSON.parse(body) as Record<string, unknown>;
        return `[${Object.entries(o)
          .map(([a, b]) => `${a}=${typeof b === 'string' ? b : JSON.stringify(b)}`)
          .join(',')}]`;
      } catch {
        return `[${body}]`;
      }
    }
    case 'v:':
      try {
        const v = JSON.parse(body) as unknown;
        return `[${typeof v === 'string' ? v : JSON.stringify(v)}]`;
      } catch {
        return `[${body}]`;
      }
    case 'i:':
      return `[${body}]`;
    default:
      return `.${k}`;
  }
}

/** The leaf field paths of a FieldsV1 set (a node with no children, or marked with "."). */
export function leafPaths(fields: unknown, prefix = '', out: string[] = []): string[] {
  if (!fields || typeof fields !== 'object') return out;
  const entries = Object.entries(fields as Record<string, unknown>);
  const children = entries.filter(([k]) => k !== '.');
  if (prefix && (children.length === 0 || entries.some(([k]) => k === '.'))) out.push(prefix);
  for (const [k, v] of children) {
    const s = segment(k);
    if (s !== undefined) leafPaths(v, prefix + s, out);
  }
  return out;
}

const managedFieldsOf = (obj: KubeObject): unknown => (obj.metadata as { managedFields?: unknown }).managedFields;

/**
 * Ownership per `managedFields` array, computed once per array: the informer's compactor shares an array equal to
 * one seen before (and freezes it), so an object's next version usually carries the very same array.
 */
const ownershipCache = new WeakMap<object, Map<string, Set<string>>>();

/** field path → managers owning it (status fields written through /status are `.status…` paths too). */
function ownership(obj: KubeObject): Map<string, Set<string>> {
  const mf = managedFieldsOf(obj);
  if (!Array.isArray(mf)) return new Map();
  const frozen = Object.isFrozen(mf);
  const cached = frozen ? ownershipCache.get(mf) : undefined;
  if (cached) return cached;
  const out = new Map<string, Set<string>>();
  if (frozen) ownershipCache.set(mf, out);
  for (const e of mf as ManagedFieldsEntry[]) {
    if (!e || typeof e.manager !== 'string') continue;
    for (const p of leafPaths(e.fieldsV1)) {
      let s = out.get(p);
      if (!s) out.set(p, (s = new Set()));
      s.add(e.manager);
    }
  }
  return out;
}

export class FieldFightDetector {
  private readonly own: string | undefined;
  private readonly threshold: number;
  private readonly windowMs: number;
  private readonly cooldownMs: number;
  /** key → field → flips (oldest first, within the window). */
  private readonly flips = new Map<ObjectKey, Map<string, Flip[]>>();
  /** `${key}|${field}|${a}|${b}` → when it was last reported. */
  private readonly reported = new Map<string, number>();

  constructor(options: FieldFightOptions = {}) {
    this.own = options.ownManager;
    this.threshold = Math.max(2, options.threshold ?? 4);
    this.windowMs = options.windowMs ?? 120_000;
    this.cooldownMs = options.cooldownMs ?? 300_000;
  }

  /**
   * Feeds one update of a cached object. Returns the fights it completes
   * (usually none). Resyncs (same resourceVersion) and objects without
   * managedFields change nothing.
   */
  observe(key: ObjectKey, oldObj: KubeObject, newObj: KubeObject, now: number): FieldFightWarning[] {
    if (oldObj.metadata.resourceVersion === newObj.metadata.resourceVersion) return [];
    // The same managedFields array (shared by the informer's compactor when equal): no field changed hands.
    const mfOld = managedFieldsOf(oldObj);
    if (mfOld !== undefined && mfOld === managedFieldsOf(newObj)) return [];
    const before = ownership(oldObj);
    if (before.size === 0) return [];
    const after = ownership(newObj);
    let perKey = this.flips.get(key);
    const out: FieldFightWarning[] = [];
    for (const [field, owners] of after) {
      const prev = before.get(field);
      if (!prev) continue;
      // Ownership moved: a manager gained the field and another one lost it.
      const gained = [...owners].filter((m) => !prev.has(m));
      const lost = [...prev].filter((m) => !owners.has(m));
      if (gained.length !== 1 || lost.length !== 1) continue;
      const flip: Flip = { at: now, from: lost[0]!, to: gained[0]! };
      if (!perKey) this.flips.set(key, (perKey = new Map()));
      const list = (perKey.get(field) ?? []).filter((f) => now - f.at <= this.windowMs);
      list.push(flip);
      perKey.set(field, list);
      const pair = [flip.from, flip.to].sort();
      const between = list.filter((f) => [f.from, f.to].sort().join('\0') === pair.join('\0'));
      // Both directions must occur: a one-way hand-over (a migration to a new manager) is no fight.
      const forth = between.filter((f) => f.from === pair[0]).length;
      const back = between.length - forth;
      if (between.length < this.threshold || forth === 0 || back === 0) continue;
      const id = `${key}|${field}|${pair.join('|')}`;
      const last = this.reported.get(id);
      if (last !== undefined && now - last < this.cooldownMs) continue;
      this.reported.set(id, now);
      const involvesOwn = this.own !== undefined && pair.includes(this.own);
      const other = involvesOwn ? pair.find((m) => m !== this.own)! : pair[0]!;
      const second = involvesOwn ? this.own! : pair[1]!;
      const spanMs = now - between[0]!.at;
      const secs = Math.max(1, Math.round(spanMs / 1000));
      const message = involvesOwn
        ? `another controller (field manager "${other}") is fighting this one over ${field} of ${key}: the field changed hands ${between.length} times in ${secs}s. Each write undoes the other's; find the other controller (kubectl get -o yaml --show-managed-fields shows its writes) and make one of them stop owning ${field}.`
        : `field managers "${other}" and "${second}" are fighting over ${field} of ${key}: the field changed hands ${between.length} times in ${secs}s. Each write undoes the other's; make one of them stop owning ${field}.`;
      out.push({ key, field, managers: [other, second], flips: between.length, spanMs, involvesOwn, message });
    }
    return out;
  }

  /** Drops what is known about a key (deleted object). */
  forget(key: ObjectKey): void {
    this.flips.delete(key);
    for (const id of this.reported.keys()) if (id.startsWith(`${key}|`)) this.reported.delete(id);
  }
}
