import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ageOf, formatAge, formatDuration, plural } from '../../../../src/host/views/format.ts';

describe('formatAge', () => {
  const cases: Array<[number, string]> = [
    [-5_000, '0s'],
    [0, '0s'],
    [59_999, '59s'],
    [60_000, '1m'],
    [250_000, '4m10s'],
    [600_000, '10m'],
    [3_599_000, '59m'],
    [3_600_000, '1h'],
    [3_600_000 * 3 + 5 * 60_000, '3h5m'],
    [86_400_000, '1d'],
    [86_400_000 * 6 + 3_600_000 * 2, '6d2h'],
    [86_400_000 * 45, '45d'],
  ];
  for (const [ms, want] of cases) it(`${ms} ms → ${want}`, () => assert.equal(formatAge(ms), want));
});

describe('formatDuration', () => {
  it('uses ms below a second, one decimal below 10 s, then ages', () => {
    assert.equal(formatDuration(0), '0ms');
    assert.equal(formatDuration(849.6), '850ms');
    assert.equal(formatDuration(1234), '1.2s');
    assert.equal(formatDuration(42_000), '42s');
    assert.equal(formatDuration(125_000), '2m5s');
  });
});

describe('ageOf', () => {
  it('measures an RFC 3339 timestamp from now, and ignores garbage', () => {
    const now = Date.parse('2026-01-01T00:10:00Z');
    assert.equal(ageOf('2026-01-01T00:00:00Z', now), '10m');
    assert.equal(ageOf('not a time', now), undefined);
    assert.equal(ageOf(undefined, now), undefined);
  });
});

describe('plural', () => {
  it('agrees with the count', () => {
    assert.equal(plural(1, 'finalizer'), '1 finalizer');
    assert.equal(plural(0, 'finalizer'), '0 finalizers');
    assert.equal(plural(2, 'entry', 'entries'), '2 entries');
  });
});
