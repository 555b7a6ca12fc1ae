import { scanItem } from './listStream.ts';

/**
 * Where shared managedFields values come from: the cache's compactor (see ObjectCompactor). Both return a deeply
 * frozen value with the content of their argument (the one seen before, or the argument itself, frozen and kept).
 */
export interface ManagedFieldsSharing {
  /** `tree` was just parsed: the callee may freeze and keep it. */
  shareFieldsV1(tree: object): object;
  /** `list` was just parsed: the callee shares its entries' trees and strings, and may freeze and keep it. */
  shareManagedFields(list: unknown[]): unknown[];
}

/** What {@link ManagedFieldsByBytes.substitute} made of a batch: the bytes to parse and the values to put back. */
export interface Substitution {
  /** The batch with every reused value replaced by {@link PLACEHOLDER}: parse this instead of the batch. */
  readonly bytes: Uint8Array;
  /** The shared values, in the order their placeholders appear in {@link bytes}. */
  readonly values: unknown[];
  /** Per value: true for a whole managedFields array, false for a fieldsV1 tree. */
  readonly isList: boolean[];
}

const enc = new TextEncoder();
const MANAGED_FIELDS_KEY = enc.encode('"managedFields":');
const FIELDS_V1_KEY = enc.encode('"fieldsV1":');
/**
 * What stands in for a reused value in the bytes parsed: the JSON string of U+0001. JSON can only write U+0001 as
 * the escape `\u0001` (a raw control byte in a string is invalid), so a batch whose bytes hold no `\u0001` parses to
 * no such string but the placeholders.
 */
const PLACEHOLDER_BYTES = enc.encode('"\\u0001"');
const PLACEHOLDER = '\u0001';
const PLACEHOLDER_ESCAPE = enc.encode('\\u0001');

/** Positions in a managedFields array whose last fieldsV1 tree is remembered. */
const MEMO_TREES = 8;
/** Arrays looked up before deciding whether they repeat (see ManagedFieldsByBytes.listLookups). */
const LIST_TRIAL = 64;
const LBRACE = 0x7b;
const LBRACKET = 0x5b;

function skipWhitespace(b: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = b[i]!;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

/**
 * Lets a LIST parser skip parsing `managedFields` bytes it has seen before. Server-encoded objects written by the same
 * managers carry byte-identical `managedFields[].fieldsV1` trees (and, when written at the same second, whole
 * `managedFields` arrays); the cache keeps one shared, deeply frozen value for each ({@link ManagedFieldsSharing}).
 * This table maps the exact JSON bytes of such a value to that shared value, so the parser hands `JSON.parse` a
 * short placeholder instead of the bytes and puts the shared value in its place afterwards: no parse, no
 * short-lived copy for the garbage collector, no re-serialisation by the compactor to find the shared one.
 *
 * Contract (what the parser's caller sees is exactly what parsing the bytes and then sharing would give):
 * - Only values found at `"managedFields":[…]` and, inside those, `"fieldsV1":{…}` are candidates; a value is
 *   replaced only when its bytes equal bytes seen before (compared whole, as the key of a map), so the shared value
 *   has the content `JSON.parse` of these bytes would give. Keys and key order are untouched.
 * - {@link restore} checks that every placeholder came back exactly at `item.metadata.managedFields` or
 *   `item.metadata.managedFields[i].fieldsV1`, in byte order, once each; anything else (a matching key elsewhere,
 *   duplicate keys, bytes that are not JSON) makes it return false, and the caller parses the original bytes.
 * - Every value in the tables was parsed from exactly the bytes it is filed under. A fieldsV1 tree seen for the
 *   first time is parsed alone and shared at once; a whole array when its bytes come a second time (mostly, arrays
 *   differ per object: the time of the last write). The values handed over are frozen, as the compactor makes them.
 * - Memory is bounded: each table holds at most its number of entries and starts over when full; {@link clear}
 *   empties them (the shared values stay wherever they were put).
 */
export class ManagedFieldsByBytes {
  private trees = new Map<string, object>();
  private lists = new Map<string, unknown[]>();
  /** Bytes of arrays seen once: an array is parsed alone and kept for reuse when its bytes come again. */
  private listsSeen = new Set<string>();
  /**
   * The last array reused and, per position in an array, the last fieldsV1 tree: objects listed one after the
   * other mostly repeat them, and comparing bytes is cheaper than finding a value's end and looking it up.
   */
  private lastList: { bytes: Buffer; value: unknown[] } | undefined;
  private readonly lastTrees: Array<{ bytes: Buffer; value: object } | undefined> = [];
  /**
   * Arrays looked up by their bytes and found. Mostly, whole arrays differ per object (the time of the last write):
   * once most of the first ones were new, arrays are no longer looked up (only compared with the last one reused)
   * until {@link clear}, and only their trees are reused.
   */
  private listLookups = 0;
  private listFinds = 0;
  private out = new Uint8Array(64 << 10);
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  private readonly scan = { depth: 0, inString: false, escape: false };

  private readonly sharing: ManagedFieldsSharing;
  private readonly maxTrees: number;
  private readonly maxLists: number;

  constructor(sharing: ManagedFieldsSharing, maxTrees = 4096, maxLists = 1024) {
    this.sharing = sharing;
    this.maxTrees = maxTrees;
    this.maxLists = maxLists;
  }

  /** Forgets every byte sequence seen (e.g. when a list ends: the next one may be long after). */
  clear(): void {
    this.trees = new Map();
    this.lists = new Map();
    this.listsSeen = new Set();
    this.lastList = undefined;
    this.lastTrees.length = 0;
    this.listLookups = 0;
    this.listFinds = 0;
  }

  private listsRepeat(): boolean {
    return this.listLookups < LIST_TRIAL || this.listFinds * 4 >= this.listLookups;
  }

  /**
   * `src[0, n)` (a batch of complete items) with the values seen before replaced by placeholders, or undefined when
   * nothing was replaced (then parse `src` as it is). `src` is not changed; the result's bytes stay valid until the
   * next call.
   */
  substitute(src: Uint8Array, n: number): Substitution | undefined {
    const buf = Buffer.from(src.buffer, src.byteOffset, n);
    let m = buf.indexOf(MANAGED_FIELDS_KEY);
    if (m < 0 || buf.indexOf(PLACEHOLDER_ESCAPE) >= 0) return undefined;
    const values: unknown[] = [];
    const isList: boolean[] = [];
    let out = this.out;
    if (out.length < n) out = this.out = new Uint8Array(Math.max(n, out.length * 2));
    let w = 0;
    /** src[from) not copied yet. */
    let from = 0;
    const put = (start: number, end: number, value: unknown, list: boolean) => {
      out.set(src.subarray(from, start), w);
      w += start - from;
      out.set(PLACEHOLDER_BYTES, w);
      w += PLACEHOLDER_BYTES.length;
      from = end;
      values.push(value);
      isList.push(list);
    };
    /** The next `"fieldsV1":` at or after `fvFrom` (-1: none after it): one search serves the items that follow. */
    let fv = -1;
    let fvFrom = n;
    while (m >= 0) {
      const vs = skipWhitespace(src, m + MANAGED_FIELDS_KEY.length, n);
      if (src[vs] !== LBRACKET) {
        m = buf.indexOf(MANAGED_FIELDS_KEY, vs);
        continue;
      }
      // The array of the item before, when these bytes start with its bytes (a complete JSON array ends where its
      // bytes end); else, while arrays repeat, a scan for the array's end and a lookup of its bytes.
      let ve = -1;
      let list: unknown[] | undefined;
      const last = this.lastList;
      if (last !== undefined && vs + last.bytes.length <= n && last.bytes.compare(buf, vs, vs + last.bytes.length) === 0) {
        ve = vs + last.bytes.length;
        list = last.value;
      } else if (this.listsRepeat()) {
        ve = this.valueEnd(src, vs, n);
        if (ve < 0) break; // not JSON: the batch's parse reports it
        list = ve - vs < PLACEHOLDER_BYTES.length ? undefined : this.list(buf, src, vs, ve);
      }
      if (list !== undefined) {
        put(vs, ve, list, true);
        m = buf.indexOf(MANAGED_FIELDS_KEY, ve);
        continue;
      }
      // The trees: those of this array (up to its end, or, when it was not looked for, up to the next item's array;
      // a tree found past this array does not come back where it was put, and the batch is then parsed as it is).
      const next = buf.indexOf(MANAGED_FIELDS_KEY, ve < 0 ? vs : ve);
      const bound = ve >= 0 ? ve : next >= 0 ? next : n;
      for (let j = 0, at = vs; ; j++) {
        if (fvFrom > at || (fv >= 0 && fv < at)) {
          fvFrom = at;
          fv = buf.indexOf(FIELDS_V1_KEY, at);
        }
        if (fv < 0 || fv >= bound) break;
        const ts = skipWhitespace(src, fv + FIELDS_V1_KEY.length, bound);
        at = fv + FIELDS_V1_KEY.length;
        if (src[ts] !== LBRACE) continue;
        const memo = this.lastTrees[j];
        if (memo !== undefined && ts + memo.bytes.length <= bound && memo.bytes.compare(buf, ts, ts + memo.bytes.length) === 0) {
          at = ts + memo.bytes.length;
          put(ts, at, memo.value, false);
          continue;
        }
        const te = this.valueEnd(src, ts, bound);
        if (te < 0 || te - ts < PLACEHOLDER_BYTES.length) continue; // not JSON, or shorter than the placeholder
        const tree = this.tree(buf, src, ts, te);
        if (tree === undefined) continue;
        if (j < MEMO_TREES) this.lastTrees[j] = { bytes: Buffer.from(src.subarray(ts, te)), value: tree };
        at = te;
        put(ts, te, tree, false);
      }
      m = next;
    }
    if (values.length === 0) return undefined;
    out.set(src.subarray(from, n), w);
    w += n - from;
    return { bytes: out.subarray(0, w), values, isList };
  }

  /**
   * Puts the shared values back into `items` (parsed from {@link Substitution.bytes}). False when a placeholder is
   * not where it was put (the caller then parses the original bytes; `items` may hold some shared values already,
   * and must be dropped).
   */
  restore(items: unknown, sub: Substitution): boolean {
    if (!Array.isArray(items)) return false;
    const { values, isList } = sub;
    let k = 0;
    for (let i = 0; i < items.length; i++) {
      const md = (items[i] as { metadata?: { managedFields?: unknown } } | null)?.metadata;
      if (!md || typeof md !== 'object') continue;
      const mf = md.managedFields;
      if (mf === PLACEHOLDER) {
        if (k >= values.length || !isList[k]) return false;
        md.managedFields = values[k++];
        continue;
      }
      if (!Array.isArray(mf)) continue;
      for (let j = 0; j < mf.length; j++) {
        const e = mf[j] as { fieldsV1?: unknown } | null;
        if (e && typeof e === 'object' && e.fieldsV1 === PLACEHOLDER) {
          if (k >= values.length || isList[k]) return false;
          e.fieldsV1 = values[k++];
        }
      }
    }
    return k === values.length;
  }

  /** The shared tree for the fieldsV1 bytes src[start, end), parsing and sharing them if new; undefined if not JSON. */
  private tree(buf: Buffer, src: Uint8Array, start: number, end: number): object | undefined {
    const key = buf.toString('latin1', start, end);
    let tree = this.trees.get(key);
    if (tree !== undefined) return tree;
    let parsed: unknown;
    try {
      parsed = JSON.parse(this.decoder.decode(src.subarray(start, end)));
    } catch {
      return undefined; // left in place: the batch's parse reports it
    }
    if (!parsed || typeof parsed !== 'object') return undefined;
    tree = this.sharing.shareFieldsV1(parsed);
    if (this.trees.size >= this.maxTrees) this.trees = new Map();
    this.trees.set(key, tree);
    return tree;
  }

  /**
   * The shared array for the managedFields bytes src[start, end) if they were seen before: parsed alone and shared
   * the second time they come (their trees shared too), undefined the first time or if not JSON.
   */
  private list(buf: Buffer, src: Uint8Array, start: number, end: number): unknown[] | undefined {
    const key = buf.toString('latin1', start, end);
    this.listLookups++;
    let list = this.lists.get(key);
    if (list !== undefined) {
      this.listFinds++;
      this.lastList = { bytes: Buffer.from(src.subarray(start, end)), value: list };
      return list;
    }
    if (!this.listsSeen.has(key)) {
      if (this.listsSeen.size >= this.maxLists) this.listsSeen = new Set();
      this.listsSeen.add(key);
      return undefined;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(this.decoder.decode(src.subarray(start, end)));
    } catch {
      return undefined;
    }
    if (!Array.isArray(parsed)) return undefined;
    list = this.sharing.shareManagedFields(parsed);
    this.listFinds++;
    this.listsSeen.delete(key);
    if (this.lists.size >= this.maxLists) this.lists = new Map();
    this.lists.set(key, list);
    this.lastList = { bytes: Buffer.from(src.subarray(start, end)), value: list };
    return list;
  }

  /** The index just past the object or array starting at src[start], or -1 if it does not end before `end`. */
  private valueEnd(src: Uint8Array, start: number, end: number): number {
    const s = this.scan;
    s.depth = 1;
    s.inString = false;
    s.escape = false;
    const e = scanItem(end === src.length ? src : src.subarray(0, end), start + 1, s);
    return e;
  }
}
