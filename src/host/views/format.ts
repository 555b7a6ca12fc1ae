/**
 * Text formatting for the views: ages and durations in kubectl's compact
 * style. Pure functions (no `vscode`), unit-tested in test/unit/host-free.
 */

/** kubectl-style age of a span in ms: "12s", "4m10s", "3h5m", "6d2h", "45d"; never negative. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  if (d < 8) return h % 24 ? `${d}d${h % 24}h` : `${d}d`;
  return `${d}d`;
}

/** A short duration in ms: "0ms", "850ms", "1.2s", "42s", then as {@link formatAge}. */
export function formatDuration(ms: number): string {
  const v = Math.max(0, ms);
  if (v < 1000) return `${Math.round(v)}ms`;
  if (v < 10_000) return `${(v / 1000).toFixed(1)}s`;
  return formatAge(v);
}

/** Age of an RFC 3339 timestamp at `now`, or undefined when it does not parse. */
export function ageOf(timestamp: string | undefined, now: number): string | undefined {
  if (!timestamp) return undefined;
  const t = Date.parse(timestamp);
  return Number.isNaN(t) ? undefined : formatAge(now - t);
}

/** "1 finalizer", "3 finalizers". */
export function plural(n: number, noun: string, nouns = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : nouns}`;
}
