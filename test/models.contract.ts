// The model providers' contract: one suite every ModelProvider runs, each
// against a scripted stand-in of its API that we own (test/support/
// model-standin.ts for the Messages API, test/support/openai-standin.ts for
// OpenAI-compatible servers). A harness translates a neutral script (text, a
// tool call, usage figures, an error, a delay) into its stand-in's wire form
// and reads back what the stand-in received in the same neutral form, so the
// cases below are written once.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { freePort } from './support/up.js';
import { Type } from '@sinclair/typebox';
import { withRetries, type ModelOutcome, type ModelProvider, type ModelRequest } from '../src/models/index.js';

export interface NeutralReply {
  text?: string;
  tool?: { name: string; input: unknown };
  /** The provider's own figures; `null` leaves them out of the answer. */
  usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number } | null;
  stop?: 'max_tokens';
  error?: { status: number; retryAfterS?: number };
  delayMs?: number;
  /** A 200 whose body is not JSON. */
  garbage?: boolean;
}

export interface SeenRequest {
  model: string;
  system: string;
  messages: { role: string; content: string }[];
  maxTokens: number;
  tool: { name: string; schema: unknown } | null;
  forced: boolean;
  stream: boolean;
}

export interface Harness {
  /** Whether the API reports prompt-cache writes (the Messages API does; chat completions do not). */
  cacheWrite: boolean;
  /** A provider pointed at the stand-in. */
  provider(): ModelProvider;
  /** A provider pointed at a port nobody listens on. */
  unreachable(port: number): ModelProvider;
  /** Replaces whatever the stand-in had left to say with these replies, in order (then its fallback). */
  script(...replies: NeutralReply[]): void;
  seen(): SeenRequest[];
  close(): Promise<void>;
}

const Verdict = Type.Object(
  {
    mode: Type.Union([Type.Literal('solo'), Type.Literal('split'), Type.Literal('murder')]),
    reason: Type.String({ maxLength: 200 }),
  },
  { additionalProperties: false },
);
const TOOL = { name: 'triage', description: 'Decide how the item is flown.', schema: Verdict };

function base(extra: Partial<ModelRequest> = {}): ModelRequest {
  return { system: 'You are the Sentry.', messages: [{ role: 'user', content: 'write the release notes' }], maxTokens: 300, timeoutMs: 5_000, ...extra };
}

function ok(o: ModelOutcome): asserts o is Extract<ModelOutcome, { ok: true }> {
  if (!o.ok) assert.fail(`expected success, got ${o.error.kind}: ${o.error.message}`);
}

function fail(o: ModelOutcome): asserts o is Extract<ModelOutcome, { ok: false }> {
  if (o.ok) assert.fail(`expected a failure, got ${JSON.stringify(o).slice(0, 200)}`);
}

export function modelContract(name: string, setup: () => Promise<Harness>): void {
  describe(`model provider contract: ${name}`, () => {
    let h: Harness;
    let p: ModelProvider;
    before(async () => {
      h = await setup();
      p = h.provider();
    });
    after(() => h.close());

    test('declares its capabilities: structured output, token usage and streaming', () => {
      assert.deepEqual(Object.keys(p.capabilities).sort(), ['streaming', 'structuredOutput', 'tokenUsage']);
      assert.equal(p.capabilities.structuredOutput, true);
      assert.equal(p.capabilities.tokenUsage, true);
      assert.match(p.label, new RegExp(`^${p.provider}:`));
    });

    test('a text call: the answer, and the provider\'s own usage figures', async () => {
      h.script({ text: 'Solo: one crow can write notes.', usage: { input: 120, output: 17 } });
      const o = await p.call(base());
      ok(o);
      assert.equal(o.kind, 'text');
      assert.equal(o.text, 'Solo: one crow can write notes.');
      assert.equal(o.stop, 'end');
      assert.deepEqual(o.usage, { input: 120, output: 17, cacheRead: 0, cacheWrite: 0, total: 137, estimated: false });
      assert.ok(o.model.length > 0);
    });

    test('the request carries the model, the system prompt, the messages in order and the output cap', async () => {
      h.script({ text: 'ok' });
      const messages = [
        { role: 'user' as const, content: 'first' },
        { role: 'assistant' as const, content: 'second' },
        { role: 'user' as const, content: 'third' },
      ];
      ok(await p.call(base({ system: 'Be brief.', messages, maxTokens: 77 })));
      const r = h.seen().at(-1)!;
      assert.equal(r.model, p.model);
      assert.equal(r.system, 'Be brief.');
      assert.deepEqual(r.messages, messages);
      assert.equal(r.maxTokens, 77);
      assert.equal(r.tool, null);
      assert.equal(r.stream, false);
    });

    test('a forced tool call: the tool is offered with its JSON Schema and forced; the result is its input', async () => {
      h.script({ tool: { name: 'triage', input: { mode: 'split', reason: 'two parts' } }, usage: { input: 200, output: 30 } });
      const o = await p.call(base({ tool: TOOL }));
      ok(o);
      assert.equal(o.kind, 'tool');
      if (o.kind !== 'tool') return;
      assert.deepEqual(o.input, { mode: 'split', reason: 'two parts' });
      assert.equal(o.usage.total, 230);
      const r = h.seen().at(-1)!;
      assert.equal(r.forced, true);
      assert.equal(r.tool?.name, 'triage');
      assert.deepEqual(r.tool?.schema, JSON.parse(JSON.stringify(Verdict)), 'the schema as plain JSON Schema');
    });

    test('a tool input that does not fit the schema is bad_response, and its tokens still count', async () => {
      h.script({ tool: { name: 'triage', input: { mode: 'flock', reason: 'x' } }, usage: { input: 50, output: 8 } });
      const o = await p.call(base({ tool: TOOL }));
      fail(o);
      assert.equal(o.error.kind, 'bad_response');
      assert.match(o.error.message, /mode/);
      assert.equal(o.error.retryable, false);
      assert.equal(o.usage.total, 58);
    });

    test('a forced call answered in prose is bad_response; a JSON object written as text that fits is accepted', async () => {
      h.script({ text: 'I think it is a solo job.' });
      const o = await p.call(base({ tool: TOOL }));
      fail(o);
      assert.equal(o.error.kind, 'bad_response');
      assert.match(o.error.message, /did not call triage/);
      h.script({ text: '```json\n{"mode":"murder","reason":"many views"}\n```' });
      const o2 = await p.call(base({ tool: TOOL }));
      ok(o2);
      assert.equal(o2.kind, 'tool');
      if (o2.kind === 'tool') assert.deepEqual(o2.input, { mode: 'murder', reason: 'many views' });
    });

    test('prompt-cache tokens are part of the input and reported apart', async () => {
      const u = h.cacheWrite ? { input: 1000, output: 10, cacheRead: 600, cacheWrite: 300 } : { input: 1000, output: 10, cacheRead: 600 };
      h.script({ text: 'cached', usage: u });
      const o = await p.call(base());
      ok(o);
      assert.deepEqual(o.usage, { input: 1000, output: 10, cacheRead: 600, cacheWrite: u.cacheWrite ?? 0, total: 1010, estimated: false });
    });

    test('a server that reports no usage gets an estimate, marked as one', async () => {
      h.script({ text: 'x'.repeat(400), usage: null });
      const o = await p.call(base());
      ok(o);
      assert.equal(o.usage.estimated, true);
      assert.equal(o.usage.output, 100);
      assert.ok(o.usage.input > 0 && o.usage.total === o.usage.input + o.usage.output);
    });

    test('running out of tokens is a stop reason, not an error', async () => {
      h.script({ text: 'The notes are', stop: 'max_tokens' });
      const o = await p.call(base());
      ok(o);
      assert.equal(o.stop, 'max_tokens');
      assert.equal(o.text, 'The notes are');
    });

    test('HTTP failures are errors with a kind: rate limits and outages are retryable, the rest are not', async () => {
      const cases: [number, string, boolean][] = [
        [429, 'rate_limited', true],
        [500, 'unavailable', true],
        [503, 'unavailable', true],
        [529, 'unavailable', true],
        [401, 'auth', false],
        [403, 'auth', false],
        [400, 'bad_request', false],
        [404, 'bad_request', false],
      ];
      for (const [status, kind, retryable] of cases) {
        h.script({ error: { status } });
        const o = await p.call(base());
        fail(o);
        assert.deepEqual([o.error.kind, o.error.status, o.error.retryable], [kind, status, retryable], `status ${status}`);
        assert.deepEqual(o.usage.total, 0);
      }
    });

    test('a 429 says how long the server asked to wait', async () => {
      h.script({ error: { status: 429, retryAfterS: 2 } });
      const o = await p.call(base());
      fail(o);
      assert.equal(o.error.kind, 'rate_limited');
      assert.equal(o.error.retryAfterMs, 2000);
    });

    test('an answer that cannot be read is bad_response, never a throw', async () => {
      h.script({ garbage: true });
      const o = await p.call(base());
      fail(o);
      assert.equal(o.error.kind, 'bad_response');
    });

    test('a call ends at its timeout, with kind timeout', async () => {
      h.script({ text: 'late', delayMs: 2_000 });
      const t0 = Date.now();
      const o = await p.call(base({ timeoutMs: 300 }));
      const took = Date.now() - t0;
      fail(o);
      assert.equal(o.error.kind, 'timeout');
      assert.equal(o.error.retryable, true);
      assert.ok(took < 1_500, `ended after ${took} ms`);
    });

    test('the caller can abort a call', async () => {
      h.script({ text: 'late', delayMs: 2_000 });
      const ctl = new AbortController();
      setTimeout(() => ctl.abort(), 100);
      const o = await p.call(base({ signal: ctl.signal }));
      fail(o);
      assert.equal(o.error.kind, 'aborted');
      assert.equal(o.error.retryable, false);
    });

    test('an unreachable server is unavailable', async () => {
      const q = h.unreachable(await freePort());
      const o = await q.call(base());
      fail(o);
      assert.equal(o.error.kind, 'unavailable');
      assert.equal(o.error.retryable, true);
    });

    test('streaming: the text arrives in pieces and the outcome is the same as without', async () => {
      if (!p.capabilities.streaming) return;
      h.script({ text: 'Split it: copy and schedule.', usage: { input: 40, output: 9 } });
      const pieces: string[] = [];
      const o = await p.call(base({ onText: (d) => pieces.push(d) }));
      ok(o);
      assert.equal(h.seen().at(-1)!.stream, true);
      assert.equal(pieces.join(''), 'Split it: copy and schedule.');
      assert.equal(o.text, 'Split it: copy and schedule.');
      assert.deepEqual(o.usage, { input: 40, output: 9, cacheRead: 0, cacheWrite: 0, total: 49, estimated: false });
      h.script({ tool: { name: 'triage', input: { mode: 'solo', reason: 'small' } }, usage: { input: 60, output: 12 } });
      const t = await p.call(base({ tool: TOOL, onText: () => {} }));
      ok(t);
      assert.equal(t.kind, 'tool');
      if (t.kind === 'tool') assert.deepEqual(t.input, { mode: 'solo', reason: 'small' });
      assert.equal(t.usage.total, 72);
    });

    test('streaming a timeout or an error ends the same way as without', async () => {
      if (!p.capabilities.streaming) return;
      h.script({ error: { status: 503 } });
      const o = await p.call(base({ onText: () => {} }));
      fail(o);
      assert.equal(o.error.kind, 'unavailable');
      h.script({ text: 'late', delayMs: 2_000 });
      const t = await p.call(base({ onText: () => {}, timeoutMs: 300 }));
      fail(t);
      assert.equal(t.error.kind, 'timeout');
    });

    test('retries: a retryable failure is tried again with backoff, usage adds up, and the count is bounded', async () => {
      const waits: number[] = [];
      const r = withRetries(p, { attempts: 3, baseMs: 100, random: () => 0.5, sleep: async (ms) => void waits.push(ms) });
      const before = h.seen().length;
      h.script({ error: { status: 503 } }, { error: { status: 429, retryAfterS: 1 } }, { text: 'third time', usage: { input: 10, output: 2 } });
      const o = await r.call(base());
      ok(o);
      assert.equal(o.text, 'third time');
      assert.equal(h.seen().length - before, 3);
      assert.deepEqual(waits, [50, 1000], 'jittered backoff, then the server\'s retry-after');
      h.script({ error: { status: 503 } }, { error: { status: 503 } }, { error: { status: 503 } }, { text: 'never asked' });
      const o2 = await r.call(base());
      fail(o2);
      assert.equal(o2.error.kind, 'unavailable');
      h.script({ error: { status: 401 } }, { text: 'never asked' });
      const n = h.seen().length;
      const o3 = await r.call(base());
      fail(o3);
      assert.equal(o3.error.kind, 'auth');
      assert.equal(h.seen().length - n, 1, 'auth is not retried');
      h.script({ tool: { name: 'triage', input: { mode: 'x' } }, usage: { input: 5, output: 5 } }, { tool: { name: 'triage', input: { mode: 'solo', reason: 'ok' } }, usage: { input: 5, output: 5 } });
      const o4 = await r.call(base({ tool: TOOL }));
      fail(o4);
      assert.equal(o4.error.kind, 'bad_response', 'a bad answer is not retried (the caller decides whether to ask again)');
    });

    test('retries add up the tokens failed attempts spent', async () => {
      const r = withRetries(p, { attempts: 2, baseMs: 1, sleep: async () => {} });
      h.script({ text: 'late', delayMs: 1_000, usage: { input: 1, output: 1 } }, { text: 'ok', usage: { input: 30, output: 3 } });
      const o = await r.call(base({ timeoutMs: 200 }));
      ok(o);
      assert.equal(o.usage.total, 33, 'the timed-out attempt reported nothing');
    });
  });
}
