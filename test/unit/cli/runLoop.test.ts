import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runLoopOf } from '../../../src/cli/cli.ts';
import { Emitter } from '../../../src/core/event.ts';
import { DisposableStore } from '../../../src/core/lifecycle.ts';

/**
 * A controller of a Go program as run sees it: pause/resume are requests, and its status says paused until the
 * program confirms (here: never, unless `confirm` is called), as a RemoteController's does.
 */
function remote(name: string, paused = true) {
  const calls: string[] = [];
  let confirmed = paused;
  return {
    name,
    calls,
    confirm: () => (confirmed = calls.at(-1) === 'pause'),
    pause: () => void calls.push('pause'),
    resume: () => void calls.push('resume'),
    status: () => ({ paused: confirmed }) as ReturnType<import('../../../src/core/controller/controller.ts').Controller['status']>,
  };
}

test('run (text mode) resumes a controller the Go program announces after run resumed, even before the followed controller confirmed the resume; not one announced while run is paused', () => {
  const followed = remote('harbor-keeper');
  const added = new Emitter<ReturnType<typeof remote>>();
  const program = { controllers: [followed] as ReturnType<typeof remote>[], onDidAddController: added.event };
  const store = new DisposableStore();
  try {
    const loop = runLoopOf(followed as never, program as never, store);
    // Announced while the loop is still paused (the banner not out yet): left paused; resume() then takes it along.
    const early = remote('early');
    program.controllers.push(early);
    added.fire(early);
    assert.deepEqual(early.calls, []);
    loop.resume();
    assert.deepEqual(followed.calls, ['resume']);
    assert.deepEqual(early.calls, ['resume']);
    // The followed controller's status still says paused (the program has not confirmed): one announced now runs.
    assert.equal(followed.status().paused, true);
    const late = remote('deployment');
    program.controllers.push(late);
    added.fire(late);
    assert.deepEqual(late.calls, ['resume'], 'the controller announced after resume runs');
    // Paused again (p): one announced now stays paused, though the followed status has not caught up either.
    loop.pause();
    followed.confirm();
    const later = remote('later');
    program.controllers.push(later);
    added.fire(later);
    assert.deepEqual(later.calls, []);
  } finally {
    store.dispose();
    added.dispose();
  }
});
