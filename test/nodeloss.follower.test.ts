// The node-loss test's SSE client (test/support/follower.ts; its test is
// test/nodeloss.pg.browser.test.ts) is what makes that
// test fail when a frame is lost, doubled or started over across a reconnect:
// here a scripted stream ends after a few frames and the reconnect (which must
// carry Last-Event-ID) goes on cleanly, skips a frame, repeats one, or sends a
// new snapshot, and the follower must report exactly that.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Follower } from './support/follower.js';
import { until } from './support/until.js';

const frame = (pos: number, event = 'event') => `id: ep:${pos}\nevent: ${event}\ndata: {"p":${pos}}\n\n`;

/** A stream server: connection k gets `scripts[k]` (positions; 's<n>' a snapshot at n), then is closed; later ones stay open, silent. */
async function scripted(scripts: (number | string)[][]): Promise<{ url: string; lastIds: (string | undefined)[]; close(): Promise<void> }> {
  const lastIds: (string | undefined)[] = [];
  const open = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const k = lastIds.length;
    lastIds.push(req.headers['last-event-id'] as string | undefined);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const script = scripts[k];
    if (!script) {
      res.flushHeaders();
      open.add(res);
      return;
    }
    for (const x of script) res.write(typeof x === 'string' ? frame(Number(x.slice(1)), 'snapshot') : frame(x));
    res.end();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    lastIds,
    close: () => {
      for (const r of open) r.destroy();
      return new Promise((ok) => server.close(() => ok()));
    },
  };
}

describe('the node-loss test’s SSE client reports what a reconnect lost or repeated', () => {
  const servers: { close(): Promise<void> }[] = [];
  const followers: Follower[] = [];
  after(async () => {
    for (const f of followers) f.close();
    for (const s of servers) await s.close();
  });
  async function follow(scripts: (number | string)[][]) {
    const s = await scripted(scripts);
    servers.push(s);
    const f = new Follower(s.url, '/stream', { retryMs: 5 });
    followers.push(f);
    await f.start();
    // Every scripted connection served, and the next one open.
    await until('the scripted connections served', () => s.lastIds.length > scripts.length && f.resumes.length === scripts.length, 5_000, 5);
    return { f, s };
  }

  test('a clean resume: the next position, Last-Event-ID carried, nothing flagged', async () => {
    const { f, s } = await follow([['s5', 6, 7], [8, 9]]);
    assert.deepEqual(s.lastIds, [undefined, 'ep:7', 'ep:9']);
    assert.deepEqual(f.gaps, []);
    assert.equal(f.duplicates, 0);
    assert.equal(f.resets, 0);
    assert.equal(f.last, 9);
    assert.equal(f.resumes.length, 2);
  });

  test('a frame lost across the reconnect is a gap', async () => {
    const { f } = await follow([['s5', 6, 7], [9, 10]]);
    assert.deepEqual(f.gaps, ['7 → 9']);
    assert.equal(f.duplicates, 0);
  });

  test('a frame sent again after the reconnect is a duplicate, and not counted as received', async () => {
    const { f } = await follow([['s5', 6, 7], [7, 8]]);
    assert.deepEqual(f.gaps, []);
    assert.equal(f.duplicates, 1);
    assert.equal(f.frames, 3);
    assert.equal(f.last, 8);
  });

  test('a stream that starts over with a snapshot instead of resuming is a reset', async () => {
    const { f } = await follow([['s5', 6], ['s9', 10]]);
    assert.equal(f.resets, 1);
  });
});
