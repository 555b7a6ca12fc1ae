import type { KubeList, KubeObject } from './objects.ts';
import type { ManagedFieldsByBytes } from './managedFieldsBytes.ts';

/** A parsed list body whose items are `T` (what `onItem` returns). */
export type ParsedList<T> = Omit<KubeList, 'items'> & { items: T[] };

/**
 * Parses a LIST answer's body while it arrives: a byte-level scanner over the body's chunks finds the extent of each
 * element of the top-level `"items":[…]` array and parses the elements complete in a chunk together (one
 * `JSON.parse` per chunk), so that parsing (and whatever `onItem` does per item) overlaps the transfer instead of
 * following it.
 *
 * Contract:
 * - The result of {@link end} is what `JSON.parse` of the whole body (decoded as UTF-8 the way `Response.text()`
 *   decodes it: a leading BOM dropped, invalid sequences replaced) returns, with every item replaced by
 *   `onItem(item)`, called once per item in body order as soon as the item is parsed. A body that `JSON.parse`
 *   rejects is rejected too (a {@link ListBodySyntaxError}, from {@link push} or {@link end}); nothing is returned
 *   for it.
 * - Only a top-level object's `items` member whose value is an array is streamed; every other byte (the list's
 *   `apiVersion`, `kind`, `metadata`, anything else, before or after the items) is kept aside and parsed at
 *   {@link end}. A `metadata` member is also parsed as soon as it is complete and handed to `onMetadata` (typed lists
 *   send it first: the continue token is then known before the items arrive).
 * - Chunks may be cut anywhere: inside strings, escapes and multi-byte UTF-8 sequences. Items are decoded whole
 *   (their bytes joined first when they span chunks), so no sequence is ever decoded in two parts.
 * - Cost per chunk is linear in its length; the caller bounds the work per task by the size of what it pushes.
 */
export interface ListBodyParserOptions<T> {
  /** Called once per item, in order, as it is parsed; the list holds what it returns. Default: the item itself. */
  onItem?: (item: T) => T;
  /** Called once when the top-level `metadata` member is complete (before or after the items). */
  onMetadata?: (metadata: KubeList['metadata']) => void;
  /**
   * Items' `managedFields` arrays and fieldsV1 trees whose exact bytes were seen before are not parsed: the items
   * hold the shared, deeply frozen value instead (equal content; see {@link ManagedFieldsByBytes}). Without it,
   * every byte is parsed.
   */
  managedFieldsBytes?: ManagedFieldsByBytes;
}

/** The body is not the JSON of a list (what `JSON.parse` of the whole body would have thrown). */
export class ListBodySyntaxError extends SyntaxError {
  constructor(message: string) {
    super(message);
    this.name = 'ListBodySyntaxError';
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

function isWhitespace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

/** Where the scanner is inside the items array (depth 2, directly in it). */
const ItemsState = {
  /** After `[` (an item or `]` may follow). */
  First: 0,
  /** After an item (`,` or `]` must follow). */
  AfterItem: 1,
  /** After `,` (an item must follow). */
  AfterComma: 2,
} as const;
type ItemsState = (typeof ItemsState)[keyof typeof ItemsState];

function concat(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Where {@link scanItem} is inside an item: bracket depth (0 for a string item), in a string, after a backslash. */
interface ItemScan {
  depth: number;
  inString: boolean;
  escape: boolean;
}

/**
 * Scans an object, array or string item from `i`: the index just past its end, or -1 when the chunk ends first
 * (`s` then holds where it is). Brackets are counted, not matched: a mismatch inside an item makes the item's
 * parse fail (or the body end early), which is what JSON.parse of the whole body does too.
 *
 * Two tight loops instead of one with a state test per byte: outside strings only the four brackets and the quote
 * matter; inside a string only the quote and the backslash (whose escaped byte is skipped unseen, so `\"` never
 * ends a string). Most of a list's bytes are string content, which the inner loop passes at about half the cost of
 * a loop that tests the string state on every byte (measured offline on a 25 MB list body).
 */
export function scanItem(chunk: Uint8Array, i: number, s: ItemScan): number {
  const len = chunk.length;
  let depth = s.depth;
  let inString = s.inString;
  if (inString && s.escape) i++; // the byte escaped by a backslash that ended the previous chunk
  for (;;) {
    if (inString) {
      for (; i < len; i++) {
        const c = chunk[i]!;
        if (c === QUOTE) break;
        if (c === BACKSLASH) i++; // the escaped byte (it may be in the next chunk: i then passes len)
      }
      if (i >= len) {
        s.depth = depth;
        s.inString = true;
        s.escape = i > len;
        return -1;
      }
      i++;
      inString = false;
      if (depth === 0) {
        // A string item ends.
        s.inString = false;
        s.escape = false;
        return i;
      }
    }
    for (; i < len; i++) {
      const c = chunk[i]!;
      if (c === QUOTE) break;
      if (c === LBRACE || c === LBRACKET) depth++;
      else if (c === RBRACE || c === RBRACKET) {
        if (--depth === 0) {
          s.depth = 0;
          s.inString = false;
          s.escape = false;
          return i + 1;
        }
      }
    }
    if (i >= len) {
      s.depth = depth;
      s.inString = false;
      s.escape = false;
      return -1;
    }
    i++; // past the opening quote
    inString = true;
  }
}

/** See {@link ListBodyParserOptions}. One instance per body. */
export class ListBodyParser<T = KubeObject> {
  private readonly onItem: ((item: T) => T) | undefined;
  private readonly onMetadata: ((metadata: KubeList['metadata']) => void) | undefined;
  private readonly managedFieldsBytes: ManagedFieldsByBytes | undefined;
  /** Decodes item batches as they are (a U+FEFF inside an item is data). */
  private readonly itemDecoder = new TextDecoder('utf-8', { ignoreBOM: true });
  /** Open containers: `{` or `[` bytes. */
  private readonly stack: number[] = [];
  private inString = false;
  private escape = false;
  /** A scalar item (number, true, false, null) is being read; it ends at a delimiter. */
  private inScalarItem = false;
  /** An object, array or string item is being read; {@link scan} says where in it. */
  private itemOpen = false;
  private readonly scan: ItemScan = { depth: 0, inString: false, escape: false };
  /** Everything but the items array's content, copied. */
  private readonly skeleton: Uint8Array[] = [];
  private skeletonLength = 0;
  // Top-level members (depth 1).
  /** At depth 1, the next string is a key. */
  private expectKey = false;
  private keyParts: Uint8Array[] | undefined;
  private keyLength = 0;
  private currentKey: string | undefined;
  /** Skeleton offset at which the current depth-1 member's value began (for `metadata`). */
  private valueStart = -1;
  // The items array.
  /** True between the items array's `[` and its `]`. */
  private inItems = false;
  private itemsState: ItemsState = ItemsState.First;
  private itemsSeen = false;
  private items: T[] = [];
  /**
   * The batch buffer, reused for every batch: `[` at 0, then the bytes of items not parsed yet from earlier chunks
   * (`carryLength` of them, from an item's first byte), then, while a batch is parsed, the chunk's part of it and `]`.
   * The batch is decoded from here in one piece (no per-batch allocation, no `"[" + text + "]"` string to flatten).
   */
  private batch = new Uint8Array(16 << 10);
  private carryLength = 0;
  private ended = false;
  private bytes = 0;

  constructor(options: ListBodyParserOptions<T> = {}) {
    this.onItem = options.onItem;
    this.onMetadata = options.onMetadata;
    this.managedFieldsBytes = options.managedFieldsBytes;
  }

  /** Bytes pushed so far. */
  get bytesPushed(): number {
    return this.bytes;
  }

  /** Items parsed so far. */
  get itemCount(): number {
    return this.items.length;
  }

  /** Scans `chunk` and parses the items it completes. Throws {@link ListBodySyntaxError} on bytes no JSON list can hold. */
  push(chunk: Uint8Array): void {
    if (this.ended) throw new Error('ListBodyParser: push after end');
    this.bytes += chunk.length;
    const len = chunk.length;
    // Region bookkeeping for this chunk: where the not-yet-copied skeleton bytes start (-1: inside items content),
    // where pending item bytes start (-1: none pending in this chunk) and where the last complete item ends.
    let skelFrom = this.inItems ? -1 : 0;
    let batchFrom = this.inItems && this.carryLength > 0 ? 0 : -1;
    let batchTo = -1;
    const stack = this.stack;
    const scan = this.scan;
    let i = 0;
    while (i < len) {
      if (this.inItems) {
        // Inside the items array: the hot path.
        if (this.itemOpen) {
          const end = scanItem(chunk, i, scan);
          if (end < 0) {
            i = len;
            break;
          }
          this.itemOpen = false;
          batchTo = end;
          i = end;
          continue;
        }
        const b = chunk[i]!;
        if (this.inScalarItem) {
          if (b === COMMA || b === RBRACKET || isWhitespace(b) || b === RBRACE || b === QUOTE || b === LBRACE || b === LBRACKET || b === COLON) {
            this.inScalarItem = false;
            batchTo = i;
          } else {
            i++;
            continue;
          }
        }
        // Directly in the items array: separators, an item's first byte, or the array's end.
        if (isWhitespace(b)) {
          i++;
          continue;
        }
        if (b === COMMA) {
          if (this.itemsState !== ItemsState.AfterItem) throw new ListBodySyntaxError(`unexpected "," in the list's items at byte ${this.at(chunk, i)}`);
          this.itemsState = ItemsState.AfterComma;
          i++;
          continue;
        }
        if (b === RBRACKET) {
          if (this.itemsState === ItemsState.AfterComma) throw new ListBodySyntaxError(`unexpected "]" after "," in the list's items at byte ${this.at(chunk, i)}`);
          // The items array ends: parse what is pending, then go on as skeleton from this "]".
          this.flushItems(chunk, batchFrom, batchTo);
          batchFrom = -1;
          batchTo = -1;
          this.inItems = false;
          stack.pop();
          skelFrom = i;
          i++;
          continue;
        }
        if (this.itemsState === ItemsState.AfterItem) throw new ListBodySyntaxError(`expected "," or "]" after an item of the list at byte ${this.at(chunk, i)}`);
        // An item starts here.
        if (batchFrom < 0) batchFrom = i;
        this.itemsState = ItemsState.AfterItem; // the item is complete once its extent ends
        if (b === LBRACE || b === LBRACKET) {
          scan.depth = 1;
          scan.inString = false;
          scan.escape = false;
          this.itemOpen = true;
        } else if (b === QUOTE) {
          scan.depth = 0;
          scan.inString = true;
          scan.escape = false;
          this.itemOpen = true;
        } else if (b === RBRACE) {
          throw new ListBodySyntaxError(`unexpected "}" in the list's items at byte ${this.at(chunk, i)}`);
        } else {
          this.inScalarItem = true;
        }
        i++;
        continue;
      }
      if (this.inString) {
        let j = i;
        if (this.escape) {
          this.escape = false;
          j++;
        }
        for (; j < len; j++) {
          const c = chunk[j]!;
          if (c === QUOTE) break;
          if (c === BACKSLASH) j++; // the escaped byte is skipped (it may be in the next chunk)
        }
        if (j >= len) {
          // The string goes on in the next chunk (j > len: it ended with a backslash whose escaped byte is there).
          this.escape = j > len;
          if (this.keyParts) this.addKeyBytes(chunk.subarray(i, len));
          i = len;
          break;
        }
        this.inString = false;
        if (this.keyParts) {
          this.addKeyBytes(chunk.subarray(i, j + 1));
          this.finishKey();
        }
        i = j + 1;
        continue;
      }
      const b = chunk[i]!;
      const depth = stack.length;
      switch (b) {
        case QUOTE:
          this.inString = true;
          if (depth === 1 && this.expectKey) {
            this.expectKey = false;
            this.keyParts = [];
            this.keyLength = 0;
            this.addKeyBytes(chunk.subarray(i, i + 1));
          }
          break;
        case LBRACE:
        case LBRACKET:
          if (depth === 1 && b === LBRACKET && this.currentKey === 'items') {
            // The items array begins: the skeleton keeps its "[" (and, later, its "]").
            stack.push(b);
            this.inItems = true;
            this.itemsSeen = true;
            this.itemsState = ItemsState.First;
            this.items = []; // a repeated "items" key: the last one wins, as in JSON.parse
            this.copySkeleton(chunk, skelFrom, i + 1);
            skelFrom = -1;
            if (this.carryLength > 0) throw new Error('ListBodyParser: bytes carried outside the items');
            i++;
            continue;
          }
          stack.push(b);
          if (depth === 0 && b === LBRACE) this.expectKey = true;
          break;
        case RBRACE:
        case RBRACKET: {
          const open = stack.pop();
          if (open === undefined || (open === LBRACE) !== (b === RBRACE)) {
            throw new ListBodySyntaxError(`unexpected "${String.fromCharCode(b)}" at byte ${this.at(chunk, i)}`);
          }
          if (stack.length === 1) this.memberValueEnded(chunk, skelFrom, i + 1);
          break;
        }
        case COMMA:
          if (depth === 1) {
            this.memberValueEnded(chunk, skelFrom, i);
            this.expectKey = true;
            this.currentKey = undefined;
          }
          break;
        case COLON:
          if (depth === 1 && this.currentKey !== undefined) this.valueStart = this.skeletonLength + (i + 1 - skelFrom);
          break;
        default:
          break;
      }
      i++;
    }
    if (this.inItems) {
      // The chunk ends inside the items array: parse the complete items, keep the rest for the next chunk.
      if (batchTo >= 0) {
        const openFrom = this.openItemFrom(chunk, batchTo);
        this.flushItems(chunk, batchFrom, batchTo);
        if (openFrom >= 0) this.carryBytes(chunk.subarray(openFrom, len));
      } else if (batchFrom >= 0) {
        this.carryBytes(chunk.subarray(batchFrom, len));
      }
    } else if (skelFrom >= 0) {
      this.copySkeleton(chunk, skelFrom, len);
    }
  }

  /**
   * The whole list: the skeleton parsed, its items replaced by those streamed. Throws {@link ListBodySyntaxError}
   * when the body was not complete JSON.
   */
  end(): ParsedList<T> {
    if (this.ended) throw new Error('ListBodyParser: end called twice');
    this.ended = true;
    if (this.inItems || this.inString || this.stack.length > 0) {
      throw new ListBodySyntaxError(`the list's JSON ends early (after ${this.bytes} bytes)`);
    }
    const text = new TextDecoder().decode(concat(this.skeleton, this.skeletonLength));
    let list: ParsedList<T>;
    try {
      list = JSON.parse(text) as ParsedList<T>;
    } catch (e) {
      throw new ListBodySyntaxError((e as Error).message);
    }
    if (this.itemsSeen && list && typeof list === 'object' && Array.isArray(list.items)) list.items = this.items;
    return list;
  }

  /** Where the item that is still open at the end of the chunk begins (after the last complete one), or -1. */
  private openItemFrom(chunk: Uint8Array, from: number): number {
    if (!this.itemOpen && !this.inScalarItem) return -1;
    for (let j = from; j < chunk.length; j++) {
      const b = chunk[j]!;
      if (b !== COMMA && !isWhitespace(b)) return j;
    }
    return -1;
  }

  /** Parses the complete items pending: carried bytes plus chunk[from, to). */
  private flushItems(chunk: Uint8Array, from: number, to: number): void {
    if (to < 0) {
      if (this.carryLength > 0 || from >= 0) throw new ListBodySyntaxError('an item of the list was cut off');
      return;
    }
    const start = from < 0 ? 0 : from;
    const end = 1 + this.carryLength + (to - start);
    const batch = this.room(end + 1);
    batch[0] = LBRACKET;
    batch.set(chunk.subarray(start, to), 1 + this.carryLength);
    batch[end] = RBRACKET;
    this.carryLength = 0;
    let parsed = this.parseReusing(batch, end + 1);
    if (parsed === undefined) {
      try {
        parsed = JSON.parse(this.itemDecoder.decode(batch.subarray(0, end + 1))) as T[];
      } catch (e) {
        throw new ListBodySyntaxError(`an item of the list is not JSON: ${(e as Error).message}`);
      }
    }
    const onItem = this.onItem;
    const items = this.items;
    if (onItem) for (let k = 0; k < parsed.length; k++) items.push(onItem(parsed[k]!));
    else for (let k = 0; k < parsed.length; k++) items.push(parsed[k]!);
  }

  /**
   * The batch `batch[0, n)` parsed with the managedFields values seen before put in place unparsed, or undefined
   * when there is nothing to reuse or anything went unexpectedly (the caller then parses the batch as it is, which
   * also reports its errors).
   */
  private parseReusing(batch: Uint8Array, n: number): T[] | undefined {
    const reuse = this.managedFieldsBytes;
    const sub = reuse?.substitute(batch, n);
    if (!sub) return undefined;
    let parsed: T[];
    try {
      parsed = JSON.parse(this.itemDecoder.decode(sub.bytes)) as T[];
    } catch {
      return undefined;
    }
    return reuse!.restore(parsed, sub) ? parsed : undefined;
  }

  /** The batch buffer with room for `n` bytes (carried bytes kept). */
  private room(n: number): Uint8Array {
    if (n <= this.batch.length) return this.batch;
    const grown = new Uint8Array(Math.max(n, this.batch.length * 2));
    grown.set(this.batch.subarray(0, 1 + this.carryLength));
    this.batch = grown;
    return grown;
  }

  private carryBytes(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    // A copy: the chunk's buffer may be reused by the stream.
    this.room(1 + this.carryLength + bytes.length).set(bytes, 1 + this.carryLength);
    this.carryLength += bytes.length;
  }

  private copySkeleton(chunk: Uint8Array, from: number, to: number): void {
    if (from < 0 || to <= from) return;
    this.skeleton.push(chunk.slice(from, to));
    this.skeletonLength += to - from;
  }

  private addKeyBytes(bytes: Uint8Array): void {
    this.keyParts!.push(bytes.slice());
    this.keyLength += bytes.length;
  }

  private finishKey(): void {
    const raw = new TextDecoder('utf-8', { ignoreBOM: true }).decode(concat(this.keyParts!, this.keyLength));
    this.keyParts = undefined;
    try {
      this.currentKey = JSON.parse(raw) as string;
    } catch {
      this.currentKey = undefined; // the skeleton's parse reports it
    }
  }

  /**
   * A depth-1 member's value ended at chunk[end) (skeleton bytes of this chunk start at `skelFrom`): hands a complete
   * `metadata` to `onMetadata`.
   */
  private memberValueEnded(chunk: Uint8Array, skelFrom: number, end: number): void {
    const key = this.currentKey;
    const start = this.valueStart;
    this.valueStart = -1;
    if (key !== 'metadata' || start < 0 || !this.onMetadata) return;
    const before = concat(this.skeleton, this.skeletonLength);
    const here = skelFrom >= 0 ? chunk.subarray(skelFrom, end) : new Uint8Array(0);
    const all = new Uint8Array(before.length + here.length);
    all.set(before, 0);
    all.set(here, before.length);
    let md: unknown;
    try {
      md = JSON.parse(new TextDecoder('utf-8', { ignoreBOM: true }).decode(all.subarray(start)));
    } catch {
      return; // the skeleton's parse reports it
    }
    if (md && typeof md === 'object') this.onMetadata(md as KubeList['metadata']);
  }

  private at(chunk: Uint8Array, i: number): number {
    return this.bytes - chunk.length + i;
  }
}
