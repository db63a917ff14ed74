/**
 * The dashboards' boot watch (extension/dashboard/bootWatch.ts): a visible page that never says `ready` is loaded
 * again, at most BOOT_RELOADS times, and a page that starts, is hidden or is closed is left alone. Timers are mocked.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { BOOT_RELOADS, BOOT_WAIT_MS, BootWatch } from '../../../extension/dashboard/bootWatch';

/** A watched page: its visibility, how often it was reloaded, and the lines logged. */
function page(t: TestContext, visible = true) {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const state = { visible, reloads: 0, lines: [] as string[] };
  const watch = new BootWatch({
    visible: () => state.visible,
    reload: () => { state.reloads++; },
    log: (level, line) => { state.lines.push(`${level}: ${line}`); },
  }, 'ShardLens memory view');
  return { state, watch };
}

test('a visible page that never starts is loaded again, then left with an error after the last reload', (t) => {
  const { state, watch } = page(t);
  watch.loading();
  t.mock.timers.tick(BOOT_WAIT_MS - 1);
  assert.equal(state.reloads, 0, 'nothing before the wait is over');
  t.mock.timers.tick(1);
  assert.equal(state.reloads, 1);
  assert.match(state.lines[0], /^warn: The ShardLens memory view had not started 8 s after it was shown; loading it again \(1 of 2\)/);
  for (let i = 0; i < 5; i++) t.mock.timers.tick(BOOT_WAIT_MS);
  assert.equal(state.reloads, BOOT_RELOADS, 'bounded: never a reload loop');
  assert.equal(state.lines.length, BOOT_RELOADS + 1);
  assert.match(state.lines.at(-1) ?? '', /^error: .* did not start after 2 reloads; close the view and open it again/);
});

test('a page that says ready is never reloaded', (t) => {
  const { state, watch } = page(t);
  watch.loading();
  t.mock.timers.tick(BOOT_WAIT_MS / 2);
  watch.ready();
  t.mock.timers.tick(BOOT_WAIT_MS * 3);
  assert.equal(state.reloads, 0);
  assert.deepEqual(state.lines, []);
});

test('a page that starts after one reload gets its reload count back', (t) => {
  const { state, watch } = page(t);
  watch.loading();
  t.mock.timers.tick(BOOT_WAIT_MS);
  watch.ready();
  // A later load (the panel shown again) that stalls gets the full number of reloads again.
  watch.loading();
  t.mock.timers.tick(BOOT_WAIT_MS);
  t.mock.timers.tick(BOOT_WAIT_MS);
  assert.equal(state.reloads, 3);
  assert.match(state.lines.at(-1) ?? '', /\(2 of 2\)/);
});

test('a hidden page is not reloaded; once shown it gets the full wait', (t) => {
  const { state, watch } = page(t, false);
  watch.loading();
  t.mock.timers.tick(BOOT_WAIT_MS * 3);
  assert.equal(state.reloads, 0, 'a hidden page does not run its script');
  state.visible = true;
  t.mock.timers.tick(BOOT_WAIT_MS - 1000);
  watch.visibilityChanged();
  t.mock.timers.tick(BOOT_WAIT_MS - 1);
  assert.equal(state.reloads, 0, 'the wait starts when the page is shown');
  t.mock.timers.tick(1);
  assert.equal(state.reloads, 1);
});

test('a closed page is never reloaded', (t) => {
  const { state, watch } = page(t);
  watch.loading();
  watch.dispose();
  t.mock.timers.tick(BOOT_WAIT_MS * 3);
  watch.loading();
  t.mock.timers.tick(BOOT_WAIT_MS * 3);
  assert.equal(state.reloads, 0);
});
