import type { Clock } from '../clock.ts';

export interface BackoffOptions {
  clock: Clock;
  /** Uniform random source in [0, 1) for jitter; default Math.random. */
  random?: () => number;
  /** First delay; default 800 ms (client-go reflector). */
  initialMs?: number;
  /** Largest un-jittered delay; default 30 s. */
  maxMs?: number;
  /** Growth per step; default 2. */
  factor?: number;
  /** Each delay d is drawn from [d, d·(1+jitter)); default 1.0, i.e. [d, 2d). */
  jitter?: number;
  /** Start over from `initialMs` at the first call more than this long after the last reset; default 2 min. */
  resetAfterMs?: number;
}

/**
 * The reflector's backoff, as client-go at HEAD (v0.36+: `wait.Backoff.
 * DelayWithReset` → the backoff manager's `Step`) with the reflector
 * defaults: 800 ms, ×2, capped at 30 s, jitter 1.0, reset interval 2 min.
 *
 * The reset is counted from the last reset (initially: construction), not
 * from the last failure: the first {@link next} more than 2 min after the last
 * reset starts the sequence over, so under constant failure the delays climb
 * to 30 s and fall back to 800 ms about every 2 min. (Up to v0.35 client-go's
 * ExponentialBackoffManager measured from the start of the previous backoff.)
 */
export class Backoff {
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly jitter: number;
  private readonly resetAfterMs: number;
  private currentMs: number;
  /** When the sequence last started over (construction or a reset). */
  private lastReset: number;

  constructor(options: BackoffOptions) {
    this.clock = options.clock;
    this.random = options.random ?? Math.random;
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 1;
    this.resetAfterMs = options.resetAfterMs ?? 120_000;
    this.currentMs = this.initialMs;
    this.lastReset = this.clock.now();
  }

  /** The next delay in ms (jittered), advancing the sequence. */
  next(): number {
    const now = this.clock.now();
    if (now - this.lastReset > this.resetAfterMs) {
      this.currentMs = this.initialMs;
      this.lastReset = now;
    }
    const base = this.currentMs;
    this.currentMs = Math.min(this.maxMs, this.currentMs * this.factor);
    return this.jitter > 0 ? base + this.random() * this.jitter * base : base;
  }

  /** Forgets the failures so far: the next delay is the initial one, and the reset interval counts from now. */
  reset(): void {
    this.currentMs = this.initialMs;
    this.lastReset = this.clock.now();
  }
}
