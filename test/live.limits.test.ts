// Bounded cost under attack (issue 37, points 6 and 9), in shared mode with an
// owner, an editor, a viewer and their tokens:
// - the limits belong to the person, not to a token: open streams and
//   requests a minute count across all of a person's sign-ins and tokens, and
//   a person holds a bounded number of live tokens (one more is a 409 that
//   says so), so minting tokens buys no more budget;
// - a nest stream's history costs one build however many readers open it at
//   once, and every reader still gets every record, in order, each once;
// - a process holds a bounded number of live connections: one more is a 503
//   with Retry-After (not a hang), /health still answers, and a freed slot is
//   taken again.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess } from './support/server.js';
import { openSse, type SseReader } from './support/sse.js';
import { until } from './support/until.js';
import { call, makeUser, mintToken, refused, sharedServer, stream } from './support/shared.js';
import { flockTs } from '../src/core/flock.js';
import { liveConnectionCap } from '../src/server/fd-limit.js';

describe('limits per person, in shared mode', () => {
  test('a person holds at most tokensPerPerson live tokens: one more is a 409 saying so; a revoked one frees a place; another person has their own', async () => {
    const srv = await sharedServer({ tokensPerPerson: 3 });
    try {
      const vic = await makeUser(srv, 'vic', 'default', 'viewer');
      const bob = await makeUser(srv, 'bob', 'default', 'editor');
      const toks = [];
      for (let i = 0; i < 3; i++) toks.push(await mintToken(srv, vic, 'default', 'viewer', `t${i}`));
      const over = await call(srv.url, vic, 'POST', '/tokens', { project: 'default', role: 'viewer', label: 'one more' });
      assert.equal(over.status, 409, JSON.stringify(over.json));
      assert.match(over.json.message, /3 live tokens, the most one person may \(3\); revoke one first/);
      assert.equal((await call(srv.url, bob, 'POST', '/tokens', { project: 'default', role: 'viewer', label: 'bob' })).status, 201, 'another person mints');
      assert.equal((await call(srv.url, vic, 'DELETE', `/tokens/${toks[0].tokenId}`)).status, 200);
      assert.equal((await call(srv.url, vic, 'POST', '/tokens', { project: 'default', role: 'viewer', label: 'again' })).status, 201, 'a revoked token frees its place');
    } finally {
      await srv.close();
    }
  });

  test('open streams count per person across sign-ins and tokens: a new token opens none past the limit; another person still can', async () => {
    const srv = await sharedServer({ streamsPerCaller: 3 });
    const open: SseReader[] = [];
    try {
      const vic = await makeUser(srv, 'vic', 'default', 'viewer');
      const bob = await makeUser(srv, 'bob', 'default', 'editor');
      const t1 = await mintToken(srv, vic, 'default', 'viewer', 'one');
      const t2 = await mintToken(srv, vic, 'default', 'viewer', 'two');
      open.push(await stream(srv.url, t1, '/stream'), await stream(srv.url, t2, '/stream'), await stream(srv.url, vic, '/live?s=floor:default'));
      const t3 = await mintToken(srv, vic, 'default', 'viewer', 'three');
      const r = await fetch(srv.url + '/stream', { headers: { authorization: `Bearer ${t3.token}` } });
      assert.equal(r.status, 429, 'a fourth stream of the same person, from a fresh token');
      assert.match((await r.json()).message, /at most 3 per person \(all of your sign-ins and tokens\)/);
      assert.equal(await refused(srv.url, vic, '/stream'), 429, 'and from their browser');
      const b = await stream(srv.url, bob, '/stream');
      await b.waitFor((f) => f.event === 'snapshot');
      b.close();
      open.shift()!.close();
      await until('a place is free again', async () => (await refused(srv.url, t3, '/approvals/stream')) === 200, 5000);
    } finally {
      for (const s of open) s.close();
      await srv.close();
    }
  });

  test('requests a minute count per person across tokens: spreading them over tokens buys nothing; another person has their own budget', async () => {
    const srv = await sharedServer({ requestsPerMinute: 12 });
    try {
      const vic = await makeUser(srv, 'vic', 'default', 'viewer');
      const bob = await makeUser(srv, 'bob', 'default', 'viewer');
      const toks = [await mintToken(srv, vic, 'default', 'viewer', 'a'), await mintToken(srv, vic, 'default', 'viewer', 'b'), await mintToken(srv, vic, 'default', 'viewer', 'c')];
      let ok = 0;
      let refusedAt = -1;
      for (let i = 0; i < 30 && refusedAt < 0; i++) {
        const r = await call(srv.url, toks[i % 3], 'GET', '/state');
        if (r.status === 429) {
          refusedAt = i;
          assert.match(r.json.message, /per person/);
        } else ok++;
      }
      assert.ok(refusedAt >= 0 && ok <= 12, `refused after ${ok} requests spread over three tokens (the budget is 12 a minute, minus the two mints)`);
      assert.equal((await call(srv.url, vic, 'GET', '/auth/me')).status, 429, 'their browser shares the budget');
      assert.equal((await call(srv.url, bob, 'GET', '/auth/me')).status, 200, 'another person has their own');
    } finally {
      await srv.close();
    }
  });
});

describe('a nest stream of a full nest, opened by many at once', () => {
  test('5,000 records: twenty readers get every record in order, each once, from one build of the history', { timeout: 180_000 }, async () => {
    const srv = await sharedServer();
    const readers: SseReader[] = [];
    try {
      const vic = await makeUser(srv, 'vic', 'default', 'viewer');
      const nest_id = 'full';
      await srv.flock.append([{ type: 'nest.created', nest_id, name: 'Full', crows: ['Pepper'], by: 'ann', ts: flockTs(Date.now()) }]);
      const N = 5000;
      for (let i = 0; i < N; i += 500) {
        const ts = flockTs(Date.now());
        await srv.flock.append(Array.from({ length: 500 }, (_, k) => ({ type: 'nest.message', nest_id, msg_id: `${nest_id}-${i + k + 1}`, kind: 'say', author: 'owner', text: `record ${i + k + 1} ${'x'.repeat(200)}`, to: '', refers_to: '', tagged_by: 'header', ts })));
      }
      const before = srv.flock.stats.nestHistoryBuilds;
      const toks = await Promise.all([0, 1].map((i) => mintToken(srv, vic, 'default', 'viewer', `r${i}`)));
      readers.push(...(await Promise.all(Array.from({ length: 20 }, (_, i) => openSse(`${srv.url}/api/events?nest_id=${nest_id}`, { authorization: `Bearer ${toks[i % 2].token}` })))));
      await until('every reader has every record', () => readers.every((r) => r.frames.length >= N), 120_000, 50);
      for (const r of readers) {
        const ids = r.frames.map((f) => Number(f.id!.split(':')[1]));
        assert.equal(ids.length, N);
        assert.ok(ids.every((p, i) => i === 0 || p > ids[i - 1]), 'each record once, in order, each with its own id');
        assert.equal(JSON.parse(r.frames[N - 1].data).msg_id, `${nest_id}-${N}`);
      }
      const builds = srv.flock.stats.nestHistoryBuilds - before;
      assert.ok(builds >= 1 && builds <= 5, `twenty readers opening together cost ${builds} builds of the history, not twenty`);
      const h = await fetch(srv.url + '/health');
      assert.equal(h.status, 200);
    } finally {
      for (const r of readers) r.close();
      await srv.close();
    }
  });
});

describe('live connections per process', () => {
  test('the cap is the setting, and never more than half the open-file limit', () => {
    assert.equal(liveConnectionCap(10_000, 20_000), 10_000);
    assert.equal(liveConnectionCap(10_000, 1024), 512);
    assert.equal(liveConnectionCap(10_000, null), 10_000);
  });

  test('past maxLiveConnections a stream is a 503 with Retry-After, /health still answers, and a freed place is taken again', async () => {
    const srv = await inProcess({ maxLiveConnections: 3 });
    const open: SseReader[] = [];
    try {
      open.push(await openSse(`${srv.url}/stream`), await openSse(`${srv.url}/live?s=floor:default`), await openSse(`${srv.url}/approvals/stream`));
      for (const path of ['/stream', '/live?s=floor:default']) {
        const r = await fetch(srv.url + path, { headers: { accept: 'text/event-stream' } });
        assert.equal(r.status, 503, path);
        assert.equal(r.headers.get('retry-after'), '5');
        assert.match((await r.json()).message, /holds 3 live connections, its most \(3\); try again shortly/);
      }
      const h = await fetch(srv.url + '/health');
      assert.equal(h.status, 200, '/health answers at the cap');
      open.shift()!.close();
      await until('a place is free again', async () => {
        const r = await fetch(srv.url + '/stream', { headers: { accept: 'text/event-stream' } });
        await r.body?.cancel();
        return r.status === 200;
      }, 5000);
    } finally {
      for (const s of open) s.close();
      await srv.close();
    }
  });
});
