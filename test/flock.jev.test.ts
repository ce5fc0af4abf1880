// Jev, the tagger (spec/flock-events.md, "Tagging"; issue 14 part 3): the
// contract's rule in all four tagged_by cases over real HTTP with the
// embedded classifier, every tag logged with its probabilities, the shipped
// classifier's accuracy and calibration on the held-out set (issue 36 point
// 11: kinds >= 0.90 with ECE <= 0.05, modes >= 0.80), and the model-backed
// Jev through the provider interface against the Messages-API stand-in.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { inProcess } from './support/server.js';
import { flockModel, type FlockModel } from './support/flock-model.js';
import { flockClient, type FlockClient } from './support/flock-client.js';
import { modelStandin, offersTool, step, toolUse, text } from './support/model-standin.js';
import { AnthropicProvider } from '../src/models/index.js';
import { PACKAGE_ROOT, type Roost } from '../src/server/index.js';
import { EmbeddedJev, ModelJev, calibrate, decideTag, measure, readCorpus } from '../src/server/flock/jev.js';

describe('Jev over HTTP (the embedded classifier)', () => {
  let model: FlockModel;
  let roost: Roost;
  let c: FlockClient;
  before(async () => {
    model = await flockModel('anthropic');
    roost = await inProcess({ models: model.roster(), flockBanterWaitMs: 500 });
    c = flockClient(roost.url);
  });
  after(async () => {
    await roost.close();
    await model.close();
  });
  const post = (body: Record<string, unknown>) => c.post('/api/nests/todo/messages', body);
  const logged = (msg_id: string) => roost.flock.state.nests.get('todo')!.messages.get(msg_id)!.jev;

  test('jev: sure and no header; disagreement: sure against the header; header: unsure with one; default: unsure without', async () => {
    const jev = await post({ author: 'owner', text: 'Please draft the pricing page by tomorrow.' });
    assert.equal(jev.status, 201, JSON.stringify(jev.body));
    assert.deepEqual([jev.body.kind, jev.body.tagged_by, jev.body.mode, jev.body.mode_tagged_by], ['request', 'jev', 'solo', 'jev']);

    const dis = await post({ author: 'Pepper', kind: 'say', text: 'Done: here is the FAQ, revised and shorter.' });
    assert.equal(dis.status, 201, JSON.stringify(dis.body));
    assert.deepEqual([dis.body.kind, dis.body.tagged_by], ['deliver', 'disagreement']);

    const hdr = await post({ author: 'Pepper', kind: 'claim', text: 'qwerty' });
    assert.deepEqual([hdr.body.kind, hdr.body.tagged_by], ['claim', 'header']);

    const def = await post({ author: 'owner', text: 'qwerty' });
    assert.deepEqual([def.body.kind, def.body.tagged_by, def.body.mode, def.body.mode_tagged_by], ['say', 'default', '', '']);

    // A request whose mode Jev is sure of, against the header: Jev wins.
    const split = await post({ author: 'owner', mode: 'solo', text: 'Split the roadmap up: one of you does the intro, another the pricing section.' });
    assert.deepEqual([split.body.kind, split.body.mode, split.body.mode_tagged_by], ['request', 'split', 'disagreement']);

    // Every tag is logged with its probabilities (a jev.tag per question; the mode on requests only).
    for (const r of [jev, dis, hdr, def, split]) {
      const t = logged(r.body.msg_id);
      assert.equal(t.kind?.source, 'embedded');
      assert.equal(t.kind?.band, 0.8);
      assert.ok(Math.abs(Object.values(t.kind.probs).reduce((a, b) => a + b, 0) - 1) < 0.01, JSON.stringify(t.kind));
      assert.equal(t.mode !== undefined, r.body.kind === 'request', r.body.msg_id);
    }
    assert.ok(logged(jev.body.msg_id).kind!.probs.request >= 0.8);
    assert.ok(Math.max(...Object.values(logged(def.body.msg_id).kind!.probs)) < 0.8);
    // An ask_owner header stands (it carries the phrase), still with Jev's probabilities logged.
    const ask = await post({ author: 'owner', kind: 'ask_owner', approval_phrase: 'ship it', text: 'Ship the launch copy today?' });
    assert.deepEqual([ask.body.kind, ask.body.tagged_by], ['ask_owner', 'header']);
    assert.ok(logged(ask.body.msg_id).kind);
  });

  test('the band is a setting: at 1.0 Jev is never sure, and the header stands', async () => {
    const strict = await inProcess({ models: model.roster(), flockBanterWaitMs: 500, flockJevBand: 1 });
    try {
      const r = await flockClient(strict.url).post('/api/nests/todo/messages', { author: 'Pepper', kind: 'say', text: 'Done: here is the FAQ, revised and shorter.' });
      assert.deepEqual([r.body.kind, r.body.tagged_by], ['say', 'header']);
    } finally {
      await strict.close();
    }
  });
});

describe('the rule and the classifier', () => {
  test('decideTag: the four cases at the band', () => {
    assert.deepEqual(decideTag({ say: 0.1, request: 0.9 }, '', 0.8, 'say'), { value: 'request', by: 'jev' });
    assert.deepEqual(decideTag({ say: 0.2, request: 0.8 }, 'request', 0.8, 'say'), { value: 'request', by: 'jev' });
    assert.deepEqual(decideTag({ say: 0.1, request: 0.9 }, 'claim', 0.8, 'say'), { value: 'request', by: 'disagreement' });
    assert.deepEqual(decideTag({ say: 0.3, request: 0.7 }, 'claim', 0.8, 'say'), { value: 'claim', by: 'header' });
    assert.deepEqual(decideTag({ say: 0.3, request: 0.7 }, '', 0.8, 'say'), { value: 'say', by: 'default' });
    assert.deepEqual(decideTag(undefined, '', 0.8, 'say'), { value: 'say', by: 'default' });
  });

  test('the shipped model on the held-out set (styles the training set never uses): kinds accuracy >= 0.90 and ECE <= 0.05, modes accuracy >= 0.80', async () => {
    const jev = EmbeddedJev.fromRepo(PACKAGE_ROOT);
    const held = readCorpus(join(PACKAGE_ROOT, 'data', 'jev', 'test.jsonl'));
    const m = await measure(jev, held);
    assert.ok(m.kind.n >= 150 && m.mode.n >= 50, JSON.stringify([m.kind.n, m.mode.n]));
    assert.ok(m.kind.accuracy >= 0.9, `kind accuracy ${m.kind.accuracy}`);
    assert.ok(m.kind.ece <= 0.05, `kind ECE ${m.kind.ece}`);
    assert.ok(m.mode.accuracy >= 0.8, `mode accuracy ${m.mode.accuracy}`);
    // Every kind is in the held-out set, and no held-out message is in the training or calibration data.
    assert.deepEqual(new Set(m.kind.labels.map((l) => l.label)), new Set(['say', 'request', 'claim', 'deliver', 'refer', 'decline']));
    const seen = new Set([...readCorpus(join(PACKAGE_ROOT, 'data', 'jev', 'train.jsonl')), ...readCorpus(join(PACKAGE_ROOT, 'data', 'jev', 'calibration.jsonl'))].map((r) => r.text.toLowerCase().trim()));
    assert.deepEqual(held.filter((r) => seen.has(r.text.toLowerCase().trim())).map((r) => r.text), []);
    // The temperatures were fitted (calibration.jsonl), not left at 1.
    assert.notEqual(jev.kinds.model.temperature, 1);
  });

  test('ECE: the bins weighted by their share; a perfectly calibrated set scores 0', () => {
    const rows = [
      ...Array.from({ length: 8 }, (_, i) => ({ probs: { a: 0.75, b: 0.25 }, truth: i < 6 ? 'a' : 'b' })),
      ...Array.from({ length: 2 }, () => ({ probs: { a: 0.05, b: 0.95 }, truth: 'b' })),
    ];
    const c = calibrate(rows);
    // Bin 0.7–0.8: mean p 0.75, observed 0.75; bin 0.9–1.0: mean p 0.95, observed 1.0 → 0.2 × 0.05.
    assert.equal(c.ece, 0.01);
    assert.deepEqual(c.labels, [
      { label: 'a', n: 6, right: 6 },
      { label: 'b', n: 4, right: 2 },
    ]);
  });

  test('no evidence, no certainty: gibberish and a lone word stay under the band', async () => {
    const jev = EmbeddedJev.fromRepo(PACKAGE_ROOT);
    for (const t of ['qwerty', 'zzkx vlorp', 'one more']) {
      const a = await jev.tag(t);
      assert.ok(Math.max(...Object.values(a.kindProbs)) < 0.8, `${t}: ${JSON.stringify(a.kindProbs)}`);
    }
  });
});

describe('the model-backed Jev (Messages-API stand-in)', () => {
  test('one forced tool call; its probabilities normalised; a bad answer is "unsure"', async () => {
    const s = await modelStandin([
      step(toolUse('tag_message', { kind: { say: 0.1, request: 0.6, claim: 0, deliver: 0, refer: 0, decline: 0.1 }, mode: { solo: 0.2, conspiracy: 0.6, split: 0.2 } }), offersTool('tag_message')),
      step(text('I think it is a request.')),
    ]);
    try {
      const jev = new ModelJev(new AnthropicProvider({ model: 'claude-standin', label: 'standin', baseURL: s.url, apiKey: 'test-key' }), 5000);
      const a = await jev.tag('Everyone, give me your own critique of the FAQ.', { kind: 'say' });
      assert.ok(a);
      assert.equal(a.kind, 'request');
      assert.equal(a.kindProbs.request, 0.75);
      assert.equal(a.mode, 'conspiracy');
      assert.ok(a.tokens && a.tokens > 0);
      const req = s.requests[0];
      assert.equal(req.body.tool_choice?.name, 'tag_message');
      assert.match(JSON.stringify(req.body.messages), /own critique/);
      assert.match(JSON.stringify(req.body.messages), /header says: say/);
      assert.equal(await jev.tag('anything'), null, 'text instead of the tool: no tag, so the rule treats Jev as unsure');
    } finally {
      await s.close();
    }
  });
});
