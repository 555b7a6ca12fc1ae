import { test } from 'node:test';
import assert from 'node:assert/strict';
import { delayText, secondsText } from '../../../src/core/text/duration.ts';

test('secondsText: one decimal below 10 s, whole seconds above, never negative', () => {
  assert.equal(secondsText(800), '0.8 s');
  assert.equal(secondsText(2_600), '2.6 s');
  assert.equal(secondsText(9_949), '9.9 s');
  assert.equal(secondsText(10_000), '10 s');
  assert.equal(secondsText(45_400), '45 s');
  assert.equal(secondsText(-5), '0.0 s');
});

test('delayText: whole milliseconds below a second, else seconds (a 20 s requeue is not "20000 ms")', () => {
  assert.equal(delayText(5), '5 ms');
  assert.equal(delayText(250.4), '250 ms');
  assert.equal(delayText(999), '999 ms');
  assert.equal(delayText(1_000), '1.0 s');
  assert.equal(delayText(20_000), '20 s');
  assert.equal(delayText(-1), '0 ms');
});
