// The search part of the storage contract (run by storageContract in
// storage.contract.ts, so on SQLite and on PostgreSQL alike): both stores
// answer the same queries with the same hits in the same order, the index
// rebuilt from the log equals the live one, what is appended is found by the
// next search, and a hostile query is only words.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StoreError, type EventStore, type SearchHit, type SearchQuery } from '../src/storage/types.js';

const j = (o: unknown) => ({ type: (o as { type: string }).type, body: JSON.stringify(o) });

/** The hits of each query, one query at a time (a store's pool stays small). */
async function each(s: EventStore, qs: SearchQuery[]): Promise<SearchHit[][]> {
  const out: SearchHit[][] = [];
  for (const q of qs) out.push(await all(s, q));
  return out;
}

/** Every hit of a query, following the cursor page by page. */
async function all(s: EventStore, q: SearchQuery): Promise<SearchHit[]> {
  const out: SearchHit[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const page = await s.search({ ...q, cursor });
    out.push(...page.hits);
    if (!page.next) return out;
    cursor = page.next;
  }
  throw new Error('paging did not end');
}

const ids = (hits: SearchHit[]) => hits.map((h) => `${h.stream}#${h.position}`);

export function searchContract(open: () => Promise<EventStore>, run: string): void {
  // One store for these tests (each in its own project): a PostgreSQL store is a pool of connections.
  let one: Promise<EventStore> | null = null;
  const store = (): Promise<EventStore> => (one ??= open());
  let n = 0;
  /** A project no other test (or run on the same database) uses. */
  const project = () => `s${run}n${++n}`;

  /** Seeds a project's four indexed streams; resolves with what newest-first means for the seeded events. */
  async function seed(s: EventStore, p: string): Promise<{ order: (refs: string[]) => string[] }> {
    await s.append(`floor:${p}`, [
      j({ type: 'join', agent: { id: 'a1', name: 'Ada' }, team: 'pay', status: 'working' }),
      j({ type: 'tool', agent: 'a1', team: 'pay', tool: 'Edit', activity: 'Editing payments/refund.ts' }),
      j({ type: 'tool', agent: 'b2', team: 'web', tool: 'Bash', activity: 'npm test payments' }),
    ]);
    await s.append(`approvals:${p}`, [
      j({ type: 'approval.requested', id: 'q1', asker: 'a1', team: 'pay', tool: 'Bash', input: 'git push origin main' }),
      j({ type: 'approval.decided', id: 'q1', decision: 'deny', by: 'Maya', reason: 'deploy freeze on Friday' }),
    ]);
    await s.append(`floor:${p}`, [j({ type: 'message', agent: 'a1', team: 'pay', to: ['b2'], text: 'The RÉFUND is wrong, check payments/refund.ts' })]);
    await s.append(`flock:${p}`, [j({ type: 'nest.message', nest: 'n1', author: 'crow1', text: 'a refund policy draft' })]);
    await s.append(`work:${p}`, [j({ type: 'message', conversation: 'c1', author: 'u1', text: 'refund the customer today' })]);
    // Bookkeeping and other streams are not searched.
    await s.append(`floor:${p}`, [j({ type: 'sweep', text: 'refund' })]);
    await s.append(`work:private:${p}`, [j({ type: 'message', text: 'refund private note' })]);
    const at = new Map<string, number>();
    for (const st of [`floor:${p}`, `approvals:${p}`, `flock:${p}`, `work:${p}`]) for (const e of await s.read(st, 0)) at.set(`${e.stream}#${e.position}`, e.at);
    return {
      // Newest first: append time, then stream, then position, all descending (streams by their bytes).
      order: (refs) =>
        [...refs].sort((x, y) => {
          const [sx, px] = x.split('#');
          const [sy, py] = y.split('#');
          return at.get(y)! - at.get(x)! || (sx < sy ? 1 : sx > sy ? -1 : 0) || Number(py) - Number(px);
        }),
    };
  }

  test('search: words and phrases, newest first, filtered, paged, matched words marked', async () => {
    const s = await store();
    const p = project();
    const { order } = await seed(s, p);
    const other = project();
    await s.append(`floor:${other}`, [j({ type: 'tool', agent: 'a1', team: 'pay', activity: 'refund payments elsewhere' })]);

    const refund = await all(s, { project: p, q: 'refund' });
    assert.deepEqual(ids(refund), order([`floor:${p}#2`, `floor:${p}#4`, `flock:${p}#1`, `work:${p}#1`]), 'every event with the word, newest first, none of another project, none of a private stream or a sweep');
    const tool = refund.find((h) => h.stream === `floor:${p}` && h.position === 2)!;
    assert.equal(tool.agent, 'a1');
    assert.equal(tool.team, 'pay');
    assert.equal(tool.kind, 'tool');
    assert.equal(tool.family, 'floor');
    assert.ok(Math.abs(tool.at - Date.now()) < 60_000);
    assert.match(tool.snippet, /payments\/«refund»\.ts/, 'the matched word is marked in the text as it was');
    assert.match(refund.find((h) => h.position === 4 && h.stream.startsWith('floor'))!.snippet, /«RÉFUND»/, 'case and accents do not matter, the text keeps them');

    assert.deepEqual(ids(await all(s, { project: p, q: 'payments REFUND' })), order([`floor:${p}#2`, `floor:${p}#4`]), 'every word is required');
    assert.deepEqual(ids(await all(s, { project: p, q: '"payments refund ts"' })), order([`floor:${p}#2`, `floor:${p}#4`]), 'a phrase');
    assert.deepEqual(ids(await all(s, { project: p, q: '"refund payments"' })), [], 'a phrase is in order');
    assert.deepEqual(ids(await all(s, { project: p, q: 'payments', team: 'web' })), [`floor:${p}#3`], 'team');
    assert.deepEqual(ids(await all(s, { project: p, q: 'refund', agent: 'a1' })), order([`floor:${p}#2`, `floor:${p}#4`]), 'agent');
    assert.deepEqual(ids(await all(s, { project: p, q: 'refund', kind: 'message' })), order([`floor:${p}#4`, `work:${p}#1`]), 'kind');
    assert.deepEqual(ids(await all(s, { project: p, q: 'freeze friday' })), [`approvals:${p}#2`], 'an approval’s note');
    assert.deepEqual(ids(await all(s, { project: p, q: 'push', agent: 'a1', kind: 'approval.requested' })), [`approvals:${p}#1`]);
    const t0 = Math.min(...refund.map((h) => h.at));
    assert.deepEqual(ids(await all(s, { project: p, q: 'refund', from: t0 + 1_000_000 })), [], 'from');
    assert.deepEqual(ids(await all(s, { project: p, q: 'refund', to: t0 })), [], 'to is exclusive');
    assert.deepEqual(ids(await all(s, { project: p, q: 'refund', from: t0, to: t0 + 1_000_000 })), ids(refund));

    // Pages of one: the same hits in the same order, each page says where to go on.
    const paged = await all(s, { project: p, q: 'refund', limit: 1 });
    assert.deepEqual(ids(paged), ids(refund));
    const first = await s.search({ project: p, q: 'refund', limit: 3 });
    assert.equal(first.hits.length, 3);
    assert.ok(first.next);
    const rest = await s.search({ project: p, q: 'refund', limit: 3, cursor: first.next });
    assert.deepEqual(ids([...first.hits, ...rest.hits]), ids(refund));
    assert.equal(rest.next, null);
    await assert.rejects(s.search({ project: p, q: 'refund', cursor: 'garbage' }), (e: unknown) => e instanceof StoreError && e.kind === 'bad_input');
  });

  test('search: the index rebuilt from the log equals the live one', async () => {
    const s = await store();
    const p = project();
    await seed(s, p);
    const queries: SearchQuery[] = [
      { project: p, q: 'refund' },
      { project: p, q: 'payments' },
      { project: p, q: '"payments refund"' },
      { project: p, q: 'push', agent: 'a1' },
      { project: p, q: 'refund', limit: 2 },
    ];
    const live = await each(s, queries);
    assert.ok(live[0].length > 0);
    const indexed = await s.rebuildSearch();
    assert.ok(indexed >= 8, `the rebuild indexed the seeded events (${indexed})`);
    assert.deepEqual(await each(s, queries), live);
    // And a store opened afresh on the same database finds the same.
    const t = await open();
    assert.deepEqual(await each(t, queries), live);
    await t.close();
  });

  test('search: what is appended while and after a search runs is found by the next search', async () => {
    const s = await store();
    const p = project();
    await seed(s, p);
    const before = await all(s, { project: p, q: 'zebra' });
    assert.deepEqual(before, []);
    const [during] = await Promise.all([s.search({ project: p, q: 'zebra' }), s.append(`floor:${p}`, [j({ type: 'status', agent: 'a1', activity: 'feeding the zebra' })])]);
    assert.ok(during.hits.length <= 1);
    assert.deepEqual(ids(await all(s, { project: p, q: 'zebra' })), [`floor:${p}#6`], 'after the seeded five and a sweep');
    await s.append(`work:${p}`, [j({ type: 'message', author: 'u1', text: 'a second zebra' })]);
    assert.equal((await all(s, { project: p, q: 'zebra' })).length, 2);
    if (s.capabilities.crossNodeWakeups) {
      // Another node's commit is found here as soon as it committed.
      const other = await open();
      await other.append(`flock:${p}`, [j({ type: 'nest.message', author: 'crow2', text: 'third zebra' })]);
      assert.equal((await all(s, { project: p, q: 'zebra' })).length, 3);
      await other.close();
    }
  });

  test('search: vendor, tool, status and decider filters, each matched whole, alike on both stores', async () => {
    const s = await store();
    const p = project();
    await s.append(`floor:${p}`, [
      j({ type: 'join', agent: { id: 'c1', name: 'Cy', source: 'codex' }, team: 'ops', status: 'working', activity: 'heron start' }),
      j({ type: 'tool', agent: 'c1', source: 'codex', team: 'ops', tool: 'Bash', status: 'working', activity: 'heron deploy' }),
      j({ type: 'tool', agent: 'k1', source: 'claude-code', team: 'ops', tool: 'Edit', status: 'working', activity: 'heron notes' }),
      j({ type: 'status', agent: 'k1', team: 'ops', status: 'blocked', activity: 'heron waits' }),
    ]);
    // The approvals come later (a later append time: two appends of one millisecond order by stream).
    await new Promise((r) => setTimeout(r, 3));
    await s.append(`approvals:${p}`, [
      j({ type: 'approval.requested', id: 'q9', asker: 'k1', source: 'claude-code', team: 'ops', tool: 'Bash', input: 'heron push' }),
      j({ type: 'approval.decided', id: 'q9', decision: 'deny', by: 'Maya', reason: 'heron freeze' }),
    ]);
    const find = async (f: Partial<SearchQuery>) => ids(await all(s, { project: p, q: 'heron', ...f })).sort();
    assert.deepEqual(await find({ vendor: 'codex' }), [`floor:${p}#1`, `floor:${p}#2`], "the event's own source, or its agent's");
    assert.deepEqual(await find({ vendor: 'claude-code' }), [`approvals:${p}#1`, `floor:${p}#3`]);
    assert.deepEqual(await find({ tool: 'Bash' }), [`approvals:${p}#1`, `floor:${p}#2`]);
    assert.deepEqual(await find({ status: 'blocked' }), [`floor:${p}#4`]);
    assert.deepEqual(await find({ status: 'deny' }), [`approvals:${p}#2`], "a decision's status is its decision");
    assert.deepEqual(await find({ decider: 'Maya' }), [`approvals:${p}#2`]);
    assert.deepEqual(await find({ decider: 'maya' }), [], 'matched whole, as written');
    assert.deepEqual(await find({ decider: '%' }), [], 'a pattern is only a value');
    assert.deepEqual(await find({ vendor: 'claude-code', tool: 'Edit', status: 'working' }), [`floor:${p}#3`]);
    // Newest first, as without filters.
    assert.deepEqual(ids(await all(s, { project: p, q: 'heron', tool: 'Bash' })), [`approvals:${p}#1`, `floor:${p}#2`]);
  });

  test("search: a fleet board's turns, prompts, approvals and results are found, of the project's threads only", async () => {
    const s = await store();
    const p = project();
    const other = project();
    const ev = (o: Record<string, unknown>) => j({ name: 'Paul', ts: 1, ...o });
    await s.append(`sessions:${p}:t1`, [
      ev({ type: 'session.spawn', id: 's1', session: 'checkout fix', root: '/code/shop', by: 'Paul' }),
      ev({ type: 'session.prompt', id: 's1', text: 'make the walrus refund idempotent' }),
      ev({ type: 'session.status', id: 's1', state: 'working', activity: 'walrus thinking' }),
      ev({ type: 'session.turn', id: 's1', text: 'The walrus refund now checks its key first.' }),
      ev({ type: 'session.approval', id: 's1', rid: 'r1', state: 'pending', tool: 'Bash', digest: 'npm test walrus' }),
      ev({ type: 'session.result', id: 's1', summary: 'walrus refund fixed, tests pass' }),
    ]);
    await s.append(`sessions:${p}:t2`, [ev({ type: 'session.turn', id: 's9', text: 'another walrus thread' })]);
    await s.append(`sessions:${other}:t1`, [ev({ type: 'session.turn', id: 's1', text: 'a walrus of another project' })]);
    // The default project's threads are `sessions:<thread>`: not p's.
    await s.append('sessions:t1', [ev({ type: 'session.turn', id: 's1', text: 'a walrus of the default project' })]);

    const hits = await all(s, { project: p, q: 'walrus' });
    assert.deepEqual(
      hits.map((h) => [h.stream, h.position, h.family, h.kind, h.agent]).sort((x, y) => String(x[0]).localeCompare(String(y[0])) || Number(x[1]) - Number(y[1])),
      [
        [`sessions:${p}:t1`, 2, 'fleet', 'session.prompt', 's1'],
        [`sessions:${p}:t1`, 4, 'fleet', 'session.turn', 's1'],
        [`sessions:${p}:t1`, 5, 'fleet', 'session.approval', 's1'],
        [`sessions:${p}:t1`, 6, 'fleet', 'session.result', 's1'],
        [`sessions:${p}:t2`, 1, 'fleet', 'session.turn', 's9'],
      ],
      "every turn of p's threads but the live status line; not another project's, not the default project's",
    );
    assert.deepEqual(ids(await all(s, { project: p, q: '"walrus refund"', agent: 's1', kind: 'session.turn' })), [`sessions:${p}:t1#4`]);
    assert.match((await all(s, { project: p, q: 'idempotent' }))[0].snippet, /«idempotent»/);
    assert.deepEqual(ids(await all(s, { project: 'default', q: 'walrus default' })), ['sessions:t1#1']);
    if (s.capabilities.crossNodeWakeups) {
      // Another node's turn on a new thread is found by the next search here.
      const node = await open();
      await node.append(`sessions:${p}:t3`, [ev({ type: 'session.turn', id: 's3', text: 'a walrus from elsewhere' })]);
      assert.deepEqual(ids(await all(s, { project: p, q: 'walrus elsewhere' })), [`sessions:${p}:t3#1`]);
      await node.close();
    }
    const live = ids(await all(s, { project: p, q: 'walrus' }));
    assert.ok((await s.rebuildSearch()) > 0);
    assert.deepEqual(ids(await all(s, { project: p, q: 'walrus' })), live, 'the rebuilt index holds the threads too');
  });

  test("search: Work's messages, commands, what an agent said and its results are found, under the agent and its chat, a private stream's not", async () => {
    const s = await store();
    const p = project();
    // As the Work routes write them (docs/work.md): a command's and its execution's events name the agent and its chat.
    const agent = 'sp-1:sess-9';
    const chat = `agent:${agent}`;
    const by = { uid: 'u1', name: 'Uma' };
    await s.append(`work:${p}`, [
      j({ type: 'message.posted', conversation: 'c-7', text: 'who owns the gecko invoices?', by }),
      j({ type: 'command.queued', id: 'k-1', agent, conversation: chat, text: 'reconcile the gecko invoices', by }),
    ]);
    await s.append(`work:${p}`, [
      j({ type: 'execution.started', command: 'k-1', agent, conversation: chat, by }),
      j({ type: 'execution.output', command: 'k-1', agent, conversation: chat, text: 'Reading the gecko ledger', by }),
      j({ type: 'execution.finished', command: 'k-1', agent, conversation: chat, status: 'failed', result: 'Gecko invoices: 3 of 40 do not reconcile (INV-9, INV-12, INV-31)', by }),
    ]);
    await s.append(`work:private:${p}`, [j({ type: 'message.posted', conversation: 'general', text: 'gecko invoices, privately', by })]);
    const hits = await all(s, { project: p, q: 'gecko invoices' });
    assert.deepEqual(
      hits.map((h) => [h.stream, h.position, h.family, h.kind, h.agent]),
      [
        [`work:${p}`, 5, 'work', 'execution.finished', agent],
        [`work:${p}`, 2, 'work', 'command.queued', agent],
        [`work:${p}`, 1, 'work', 'message.posted', 'Uma'],
      ],
      "the result (its agent's, not the reporter's), the command, the message; newest first; not the private stream",
    );
    assert.match(hits[0].snippet, /«Gecko» «invoices»: 3 of 40 do not reconcile/, "the result's text, its words marked");
    assert.deepEqual(ids(await all(s, { project: p, q: 'reconcile', agent, status: 'failed' })), [`work:${p}#5`], 'a failed result, by its agent');
    assert.deepEqual(ids(await all(s, { project: p, q: 'gecko', kind: 'execution.output' })), [`work:${p}#4`], 'what the agent said');
    assert.deepEqual(ids(await all(s, { project: p, q: '"INV 31"' })), [`work:${p}#5`]);
    const live = await all(s, { project: p, q: 'gecko' });
    assert.ok((await s.rebuildSearch()) > 0);
    assert.deepEqual(await all(s, { project: p, q: 'gecko' }), live, 'the rebuilt index finds them alike');
  });

  test('search: a hostile query is only words: it neither fails nor matches everything', async () => {
    const s = await store();
    const p = project();
    await seed(s, p);
    const everything = (await all(s, { project: p, q: 'a1 OR pay OR refund OR payments OR push OR freeze' })).length;
    assert.equal(everything, 0, 'OR is a word, and every word is required');
    const hostile = [
      '*',
      'refund*',
      '"',
      '""',
      '"unclosed refund',
      'NEAR(refund payments)',
      'refund NOT payments',
      'words:refund',
      '{words}: refund',
      '^refund',
      '- refund',
      'refund AND',
      '(refund',
      "'); DROP TABLE events; --",
      "refund & payments | push <-> !x:*",
      '\\',
      '\u0000refund',
      'x'.repeat(10_000),
      'refund '.repeat(2_000),
      '"a" '.repeat(3_000),
      'OR AND NOT NEAR * ^ : ( ) { } + -'.repeat(400),
    ];
    const refund = new Set(ids(await all(s, { project: p, q: 'refund' })));
    for (const q of hostile) {
      const page = await s.search({ project: p, q, limit: 100 });
      for (const h of page.hits) assert.ok(refund.has(`${h.stream}#${h.position}`), `${JSON.stringify(q.slice(0, 40))} found only what its words find`);
      assert.ok(page.hits.length <= refund.size, JSON.stringify(q.slice(0, 40)));
    }
    assert.deepEqual((await s.search({ project: p, q: '* " ( ) :' })).hits, [], 'no word, no hit');
    assert.deepEqual((await s.search({ project: p, q: '' })).hits, []);
    assert.equal((await s.search({ project: p, q: 'refund*' })).hits.length, refund.size, 'a `*` is not a prefix operator: the word is refund');
    // A filter is a value, never SQL.
    assert.deepEqual((await s.search({ project: `${p}' OR '1'='1`, q: 'refund' })).hits, []);
    assert.deepEqual((await s.search({ project: p, q: 'refund', team: "pay' OR 1=1 --" })).hits, []);
  });
}
