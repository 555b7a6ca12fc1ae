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
  /** Start over from `initialMs` when no delay was asked for during this long; default 2 min. */
  resetAfterMs?: number;
}

/**
 * The reflector's backoff (client-go `wait.Backoff.DelayWithReset` with the
 * reflector defaults: 800 ms, ×2, capped at 30 s, jitter 1.0, reset after
 * 2 min). With those numbers the delay reaches the [30 s, 60 s) band after
 * six failures, i.e. about 0.02 requests per second against a broken server.
 *
 * "Healthy for 2 min" is the time from the end of the previous delay to the
 * next call of {@link next}. (client-go up to v0.30 measured from the start of
 * the previous delay; newer releases reset every 2 min regardless of health.
 * Measuring from the end of the delay is what "2 min without trouble" means.)
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
  /** When the previous delay ended (the retried operation started). */
  private lastEnd: number | undefined;

  constructor(options: BackoffOptions) {
    this.clock = options.clock;
    this.random = options.random ?? Math.random;
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.factor = options.factor ?? 2;
    this.jitter = options.jitter ?? 1;
    this.resetAfterMs = options.resetAfterMs ?? 120_000;
    this.currentMs = this.initialMs;
  }

  /** The next delay in ms (jittered), advancing the sequence. */
  next(): number {
    const now = this.clock.now();
    if (this.lastEnd !== undefined && now - this.lastEnd > this.resetAfterMs) this.currentMs = this.initialMs;
    const base = this.currentMs;
    this.currentMs = Math.min(this.maxMs, this.currentMs * this.factor);
    const delay = this.jitter > 0 ? base + this.random() * this.jitter * base : base;
    this.lastEnd = now + delay;
    return delay;
  }

  /** Forgets the failures so far: the next delay is the initial one. */
  reset(): void {
    this.currentMs = this.initialMs;
    this.lastEnd = undefined;
  }
}
