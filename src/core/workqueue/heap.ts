/**
 * A binary min-heap over elements that remember their own position, so an
 * element can be re-prioritised or removed in O(log n) (the delaying queue
 * moves a waiting item's ready time earlier and cancels waits).
 *
 * Invariants: `less(parent, child)` is never true for a child over its parent
 * (the root is a minimum); `setIndex(e, i)` has been called with each element's
 * current position, and with -1 once it left the heap. Callers MUST call
 * {@link BinaryHeap.fix} after changing the ordering key of an element that is
 * in the heap, and MUST NOT push an element that is already in it.
 */
export class BinaryHeap<E> {
  private readonly items: E[] = [];
  private readonly less: (a: E, b: E) => boolean;
  private readonly setIndex: (e: E, i: number) => void;

  constructor(less: (a: E, b: E) => boolean, setIndex: (e: E, i: number) => void = () => {}) {
    this.less = less;
    this.setIndex = setIndex;
  }

  get size(): number {
    return this.items.length;
  }

  /** The minimum, without removing it. */
  peek(): E | undefined {
    return this.items[0];
  }

  push(e: E): void {
    this.items.push(e);
    const i = this.items.length - 1;
    this.setIndex(e, i);
    this.up(i);
  }

  /** Removes and returns the minimum. */
  pop(): E | undefined {
    return this.items.length === 0 ? undefined : this.removeAt(0);
  }

  /** Removes the element at position `i` (as last reported through `setIndex`). */
  removeAt(i: number): E {
    const n = this.items.length - 1;
    if (i < 0 || i > n) throw new RangeError(`heap index ${i} out of range 0..${n}`);
    const e = this.items[i]!;
    if (i !== n) {
      this.swap(i, n);
      this.items.pop();
      if (!this.down(i)) this.up(i);
    } else {
      this.items.pop();
    }
    this.setIndex(e, -1);
    return e;
  }

  /** Restores the heap order after the element at `i` changed its key (in either direction). */
  fix(i: number): void {
    if (!this.down(i)) this.up(i);
  }

  /**
   * The `k` smallest elements in order, without changing the heap: a best-first walk from the root (a candidate's
   * children can only follow it), O(k log k) whatever the heap's size.
   */
  smallest(k: number): E[] {
    const out: E[] = [];
    if (k <= 0 || this.items.length === 0) return out;
    const items = this.items;
    const frontier = new BinaryHeap<number>((a, b) => this.less(items[a]!, items[b]!));
    frontier.push(0);
    while (out.length < k && frontier.size > 0) {
      const i = frontier.pop()!;
      out.push(items[i]!);
      const l = 2 * i + 1;
      if (l < items.length) frontier.push(l);
      if (l + 1 < items.length) frontier.push(l + 1);
    }
    return out;
  }

  /** Removes everything (each element is told it left). */
  clear(): void {
    for (const e of this.items) this.setIndex(e, -1);
    this.items.length = 0;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(this.items[i]!, this.items[parent]!)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** Sifts down; returns whether the element moved. */
  private down(i0: number): boolean {
    const n = this.items.length;
    let i = i0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      let j = l;
      const r = l + 1;
      if (r < n && this.less(this.items[r]!, this.items[l]!)) j = r;
      if (!this.less(this.items[j]!, this.items[i]!)) break;
      this.swap(i, j);
      i = j;
    }
    return i > i0;
  }

  private swap(i: number, j: number): void {
    const a = this.items[i]!;
    const b = this.items[j]!;
    this.items[i] = b;
    this.items[j] = a;
    this.setIndex(b, i);
    this.setIndex(a, j);
  }
}
