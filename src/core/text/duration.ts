/**
 * Delays and durations as the CLI and every core-made message write them (the views use their own compact
 * `formatDuration`, "20s"): one decimal below 10 s, whole seconds above.
 */

/** Seconds: `0.8 s`, `2.6 s`, `45 s`, `3600 s` (negative spans read as 0). */
export function secondsText(ms: number): string {
  const v = Math.max(0, ms);
  return v < 10_000 ? `${(v / 1000).toFixed(1)} s` : `${Math.round(v / 1000)} s`;
}

/** A delay as written: whole milliseconds below a second, else {@link secondsText}: `5 ms`, `2.6 s`, `45 s`. */
export function delayText(ms: number): string {
  const v = Math.max(0, ms);
  return v < 1000 ? `${Math.round(v)} ms` : secondsText(v);
}
