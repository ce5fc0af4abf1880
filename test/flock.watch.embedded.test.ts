// The watchdog on every server (issue 36 point 5): with no model configured
// the embedded scorer (src/server/flock/watch-scorer.ts) scores every crow
// claim and deliver; its held-out numbers are measured and printed by
// `npm run watch:calibration`; and a message posted just before a crash is
// scored after the restart: `roost serve --model …` as a real process whose
// watchdog call hangs, killed with SIGKILL before the score, started again on
// the same file with no model: the embedded scorer scores it, and the Sentry
// flags the off-topic deliver.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { child, tempDir, type ChildServer } from './support/server.js';
import { modelStandin, text, type Reply } from './support/model-standin.js';
import { flockClient } from './support/flock-client.js';
import { openStore } from '../src/storage/index.js';
import { flockStream } from '../src/server/flock/service.js';
import { until } from './support/until.js';
import { PACKAGE_ROOT } from '../src/server/index.js';
import { EmbeddedWatchScorer, measureWatch, readWatchCorpus } from '../src/server/flock/watch-scorer.js';
import { WATCH_MARK } from '../src/server/flock/watchdog.js';

type Rec = Record<string, any>;

describe('the embedded scorer, measured', () => {
  test('the shipped model on the held-out set (frames and subjects the training never saw), and the npm script prints the table', async () => {
    const rows = readWatchCorpus(join(PACKAGE_ROOT, 'data', 'watch', 'test.jsonl'));
    const m = measureWatch(EmbeddedWatchScorer.fromRepo(PACKAGE_ROOT), rows);
    assert.ok(rows.length >= 200);
    for (const [q, c] of Object.entries(m)) {
      assert.ok(c.accuracy >= 0.9, `${q} accuracy ${c.accuracy}`);
      assert.ok(c.ece <= 0.05, `${q} ECE ${c.ece}`);
    }
    const run = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(PACKAGE_ROOT, 'scripts', 'watch.ts'), 'calibration'], { timeout: 120_000, cwd: PACKAGE_ROOT });
    assert.match(run.stdout, new RegExp(`answers_request \\(held-out\\): n ${rows.length}, accuracy ${m.answers_request.accuracy}, ECE ${m.answers_request.ece}`));
    assert.match(run.stdout, /contradicts_earlier \(held-out\)/);
    assert.match(run.stdout, /\| predicted p \| n \| mean p \| observed \|/);
    assert.match(run.stdout, /breach by the band rule at 0\.8/);
  });
});

describe('a message posted just before a crash', () => {
  test('is scored after the restart (SIGKILL while the model call hangs; restarted with no model: the embedded scorer)', async () => {
    // Every model call hangs until the caller gives up: the watchdog's never lands.
    const never: Reply = { ...text('never'), until: new Promise(() => {}) };
    const model = await modelStandin([], { fallback: never });
    const dataDir = tempDir('roost-watch-restart-');
    const env = { ANTHROPIC_API_KEY: 'test-key', ROOST_FLOCK_LEASE_MS: '1500', ROOST_FLOCK_CALL_TIMEOUT_MS: '600000' };
    let a: ChildServer | null = await child({ dataDir, env, args: ['--model', `anthropic:claude-standin@${model.url}`] });
    let b: ChildServer | null = null;
    try {
      let c = flockClient(a.url);
      assert.equal((await c.get('/api/nests')).body.watchdog.scorer, 'model');
      const req = await c.post('/api/nests/todo/messages', { author: 'owner', kind: 'request', to: 'Rook', text: 'Please summarise the release notes.' });
      assert.equal(req.status, 201, JSON.stringify(req.body));
      const del = await c.post('/api/nests/todo/messages', { author: 'Rook', kind: 'deliver', text: 'Here is a limerick about pigeons.', refers_to: req.body.msg_id });
      assert.equal(del.status, 201, JSON.stringify(del.body));
      // The watchdog's call is in the air (the stand-in has it), unanswered: kill the server.
      await until('the watchdog call', () => model.requests.some((r) => JSON.stringify(r.body?.messages ?? '').includes(WATCH_MARK) && JSON.stringify(r.body.messages).includes(del.body.msg_id)), 30_000);
      await a.stop('SIGKILL');
      a = null;

      b = await child({ dataDir, env });
      c = flockClient(b.url);
      assert.deepEqual((({ on, scorer }) => ({ on, scorer }))((await c.get('/api/nests')).body.watchdog), { on: true, scorer: 'embedded' });
      // The Sentry's flag, in the nest; Rook quarantined.
      const flag = await until(
        'the flag',
        async () => ((await c.get('/api/nests/todo/messages')).body as Rec[]).find((r) => r.kind === 'flag' && r.to === 'Rook'),
        30_000,
      );
      assert.equal(flag.refers_to, req.body.msg_id);
      assert.equal((await c.post('/api/nests/todo/messages', { author: 'Rook', text: 'still here' })).status, 403, 'quarantined');
      // The log: one `watch` for the message, the embedded scorer's (the file is readable while the server runs).
      const store = await openStore({ dataDir });
      try {
        const watches: Rec[] = [];
        for (let after = 0; ; ) {
          const page = await store.read(flockStream('default'), after, 1000);
          if (!page.length) break;
          for (const e of page) if (e.type === 'watch') watches.push(JSON.parse(e.body) as Rec);
          after = page[page.length - 1].position;
        }
        const mine = watches.filter((w) => w.msg_id === del.body.msg_id);
        assert.equal(mine.length, 1, JSON.stringify(watches));
        assert.equal(mine[0].source, 'embedded');
        assert.ok(mine[0].scores.answers_request <= 0.2, JSON.stringify(mine[0].scores));
      } finally {
        await store.close();
      }
    } finally {
      await a?.stop('SIGKILL');
      await b?.stop();
      await model.close();
    }
  });
});
