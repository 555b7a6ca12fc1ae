import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { followAfterScroll, isAtBottom, visibleRange } from '../../../../src/webview/eventLog/virtualRange.ts';

describe('visibleRange', () => {
  const cases: Array<[string, [number, number, number, number, number], { first: number; end: number }]> = [
    ['empty list', [0, 500, 22, 0, 8], { first: 0, end: 0 }],
    ['top of a long list', [0, 220, 22, 100_000, 0], { first: 0, end: 10 }],
    ['top with overscan', [0, 220, 22, 100_000, 5], { first: 0, end: 15 }],
    ['middle, partial rows', [2211, 220, 22, 100_000, 2], { first: 98, end: 113 }],
    ['bottom clamps to count', [22 * 995, 220, 22, 1000, 8], { first: 987, end: 1000 }],
    ['short list', [0, 800, 22, 3, 8], { first: 0, end: 3 }],
    ['negative scroll (overscroll bounce)', [-40, 220, 22, 50, 0], { first: 0, end: 10 }],
  ];
  for (const [name, args, want] of cases) {
    it(name, () => assert.deepEqual(visibleRange(...args), want));
  }

  it('renders a number of rows bounded by the viewport, whatever the list length', () => {
    for (const count of [100, 10_000, 1_000_000]) {
      const { first, end } = visibleRange(count * 11, 600, 22, count, 8);
      assert.ok(end - first <= Math.ceil(600 / 22) + 1 + 16, `count ${count}: ${end - first} rows`);
    }
  });
});

describe('isAtBottom', () => {
  it('is true within one row of the end and false above', () => {
    assert.equal(isAtBottom(780, 220, 1000, 22), true);
    assert.equal(isAtBottom(760, 220, 1000, 22), true);
    assert.equal(isAtBottom(700, 220, 1000, 22), false);
  });
});

it('followAfterScroll: up away from the bottom stops following, down to it resumes; a scroll event that moved nothing (the list\'s own jump, delivered after Follow was unticked) keeps the choice', () => {
  assert.equal(followAfterScroll({ follow: true, atBottom: false, scrollTop: 100, lastScrollTop: 900 }), false);
  assert.equal(followAfterScroll({ follow: false, atBottom: true, scrollTop: 900, lastScrollTop: 100 }), true);
  assert.equal(followAfterScroll({ follow: false, atBottom: true, scrollTop: 900, lastScrollTop: 900 }), false, 'unticked at the bottom stays unticked');
  assert.equal(followAfterScroll({ follow: true, atBottom: true, scrollTop: 890, lastScrollTop: 900 }), true, 'a nudge up within the last row keeps following');
  assert.equal(followAfterScroll({ follow: false, atBottom: false, scrollTop: 500, lastScrollTop: 100 }), false, 'down but not to the bottom');
});
