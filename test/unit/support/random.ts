/**
 * A deterministic PRNG (mulberry32) for randomized unit tests: the same `seed` always gives the same sequence of
 * numbers in [0, 1), so a failure can be replayed from the seed its message names.
 */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
