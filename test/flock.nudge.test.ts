// Nudges (issue 36 point 4; spec/flock-events.md, the `nudge` kind): a
// request claimed but not delivered within its expectation, or addressed to
// a crow that neither claimed nor declined it, gets one `nudge` from the
// harness to that crow (refers_to the request, tagged by Jev's verdict); at
// most one per crow per request; logged. Over real HTTP and SSE with the
// expectation set short (flockNudgeMs), and the pure tracker with `now`.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess } from './support/server.js';
import { flockClient, type FlockClient } from './support/flock-client.js';
import { openSse } from './support/sse.js';
import { emptyFlock, applyFlock, flockTs } from '../src/core/flock.js';
import { expectations } from '../src/core/nudge.js';
import type { Roost } from '../src/server/index.js';

type Rec = Record<string, any>;
const EXPECT_MS = 1500;

describe('nudges over HTTP (expectation 1.5 s)', () => {
  let roost: Roost;
  let c: FlockClient;
  before(async () => {
    roost = await inProcess({ models: null, flockNudgeMs: EXPECT_MS });
    c = flockClient(roost.url);
  });
  after(async () => {
    await roost.close();
  });
  const say = async (body: Rec) => {
    const r = await c.post('/api/nests/todo/messages', body);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body as Rec;
  };

  test('unanswered and undelivered expectations: one nudge each, from the harness to the crow, about the request; kept promises and declines get none', async () => {
    const sse = await openSse(`${roost.url}/api/events?nest_id=todo`);
    try {
      const nudgeFor = (crow: string) => sse.waitFor((f) => f.event === 'nest.message' && JSON.parse(f.data).kind === 'nudge' && JSON.parse(f.data).to === crow, 20_000);
      const t0 = Date.now();
      // Addressed to Hugin, who says nothing.
      const silent = await say({ author: 'owner', kind: 'request', to: 'Hugin', text: 'Please summarise the release notes.' });
      // Addressed to Munin, who claims and never delivers.
      const claimedReq = await say({ author: 'owner', kind: 'request', to: 'Munin', text: 'Please check the pricing page.' });
      await say({ author: 'Munin', kind: 'claim', text: 'I will take the pricing page.', refers_to: claimedReq.msg_id });
      // Pepper declines; Inky claims and delivers in time.
      const declinedReq = await say({ author: 'owner', kind: 'request', to: 'Pepper', text: 'Please translate the FAQ.' });
      await say({ author: 'Pepper', kind: 'decline', text: 'Sorry, I cannot take this: I have no access to the FAQ.', refers_to: declinedReq.msg_id });
      const keptReq = await say({ author: 'owner', kind: 'request', to: 'Inky', text: 'Please review the changelog.' });
      await say({ author: 'Inky', kind: 'claim', text: 'I will take the changelog review.', refers_to: keptReq.msg_id });
      await say({ author: 'Inky', kind: 'deliver', text: 'Here is the changelog review: the changelog reads well.', refers_to: keptReq.msg_id });

      const h = JSON.parse((await nudgeFor('Hugin')).data) as Rec;
      assert.ok(Date.now() - t0 >= EXPECT_MS, 'not before the expectation ran out');
      assert.deepEqual([h.kind, h.author, h.to, h.refers_to, h.tagged_by], ['nudge', 'harness', 'Hugin', silent.msg_id, 'jev']);
      assert.match(h.text, new RegExp(`^Jev reads ${silent.msg_id} as a request \\(\\d+%\\)`));
      assert.match(h.text, /neither claimed nor declined it within 2 s: claim it, or decline with a reason/);
      const m = JSON.parse((await nudgeFor('Munin')).data) as Rec;
      assert.deepEqual([m.kind, m.author, m.to, m.refers_to, m.tagged_by], ['nudge', 'harness', 'Munin', claimedReq.msg_id, 'jev']);
      assert.match(m.text, /you claimed it and nothing was delivered within 2 s: deliver it, or decline with a reason/);

      // Three more expectations later: still one nudge per crow per request, none for Pepper or Inky.
      await new Promise((r) => setTimeout(r, 3 * EXPECT_MS));
      const all = ((await c.get('/api/nests/todo/messages')).body as Rec[]).filter((r) => r.kind === 'nudge');
      assert.deepEqual(all.map((r) => [r.to, r.refers_to]).sort(), [
        ['Hugin', silent.msg_id],
        ['Munin', claimedReq.msg_id],
      ]);
      // Logged: the nest stream carried each once, in the durable log (the record reads back the same).
      assert.equal(sse.frames.filter((f) => f.event === 'nest.message' && JSON.parse(f.data).kind === 'nudge').length, 2);

      // The nudge is an open message addressed to its crow: Munin's deliver about the request settles the expectation; nothing more comes.
      await say({ author: 'Munin', kind: 'deliver', text: 'Here is the pricing page check: the pricing page is fine.', refers_to: claimedReq.msg_id });
      await new Promise((r) => setTimeout(r, 2 * EXPECT_MS));
      assert.equal(((await c.get('/api/nests/todo/messages')).body as Rec[]).filter((r) => r.kind === 'nudge').length, 2);
    } finally {
      sse.close();
    }
  });
});

describe('the tracker (pure, time as `now`)', () => {
  const at = Date.UTC(2026, 11, 5, 12, 0, 0);
  const ts = (ms: number) => flockTs(at + ms);
  const fold = (events: Rec[]) => {
    const s = emptyFlock();
    for (const [i, e] of events.entries()) applyFlock(s, e, i + 1);
    return s;
  };
  const msg = (n: number, ms: number, rest: Rec) => ({ type: 'nest.message', nest_id: 'todo', msg_id: `todo-${n}`, to: '', refers_to: '', tagged_by: 'header', ts: ts(ms), ...rest });
  const TEN = 10 * 60 * 1000;

  test('due at the expectation, not before; the next due time; a nudge already posted, a deliver, a decline or a quarantine settle it', () => {
    const s = fold([
      msg(1, 0, { kind: 'request', author: 'owner', to: 'Hugin', text: 'do a' }),
      msg(2, 1000, { kind: 'request', author: 'owner', to: 'Munin', text: 'do b' }),
      msg(3, 2000, { kind: 'claim', author: 'Munin', text: 'mine', refers_to: 'todo-2' }),
      msg(4, 3000, { kind: 'request', author: 'owner', to: 'Pepper', text: 'do c' }),
      msg(5, 4000, { kind: 'decline', author: 'Pepper', text: 'no access', refers_to: 'todo-4' }),
      msg(6, 5000, { kind: 'request', author: 'owner', text: 'anyone: do d' }),
    ]);
    assert.deepEqual(expectations(s, at + TEN - 1, TEN), { due: [], next: at + TEN });
    const due = expectations(s, at + TEN + 2000, TEN).due;
    assert.deepEqual(
      due.map((d) => [d.crow, d.request, d.why, d.due - at]),
      [
        ['Munin', 'todo-2', 'undelivered', TEN + 2000],
        ['Hugin', 'todo-1', 'unanswered', TEN],
      ],
    );
    // Munin's claim answered todo-2 as addressed: no "unanswered" for it, only the missing deliver.
    assert.ok(!due.some((d) => d.crow === 'Munin' && d.why === 'unanswered'));
    // A nudge posted settles the pair; a deliver settles the claim.
    applyFlock(s, msg(7, TEN + 3000, { kind: 'nudge', author: 'harness', to: 'Hugin', text: 'Jev reads todo-1 as a request', refers_to: 'todo-1', tagged_by: 'jev' }), 7);
    applyFlock(s, msg(8, TEN + 4000, { kind: 'deliver', author: 'Munin', text: 'b done', refers_to: 'todo-2' }), 8);
    assert.deepEqual(expectations(s, at + 3 * TEN, TEN), { due: [], next: null });
    // A quarantined crow is not nudged (it may not post).
    const q = fold([msg(1, 0, { kind: 'request', author: 'owner', to: 'Inky', text: 'do e' }), msg(2, 10, { kind: 'flag', author: 'Sentry', to: 'Inky', text: 'flagged', refers_to: 'todo-1', tagged_by: 'harness' })]);
    assert.deepEqual(expectations(q, at + 2 * TEN, TEN).due, []);
  });
});
