// The order of a fleet session's frames around its turns, as a member's
// stream shows them: the real bridge (`roost bridge`, a child process), the
// real Claude Code CLI with `--include-partial-messages`, and the model
// stand-in streaming each answer in pieces, as a real model does.
//
// The rule (issue 17, part 1): no `session.stream` frame of a turn follows
// that turn. The partial text of a turn, added up frame by frame, is the
// beginning of the turn's own text; after a prompt's last turn, nothing
// partial comes until the next prompt.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { need } from './support/env.js';
import { inProcess, tempDir } from './support/server.js';
import { CLAUDE_BIN, claudeAvailable } from './support/claude.js';
import { openSse, type SseFrame } from './support/sse.js';
import { modelStandin, step, text, hasResult, and, not, askedWithBash as asked, type Reply } from './support/model-standin.js';
import { until } from './support/until.js';
import { bridgeBuilt, killBridges, startBridge } from './support/bridge.js';

after(killBridges);

const THREAD = 'crew';
/**
 * Each answer streamed in pieces 200 ms apart, more than the bridge's 150 ms
 * relay period: every piece is a partial frame of its own, and the last one is
 * still to be relayed when Claude Code completes the turn right after it.
 */
const streamed = (r: Reply): Reply => ({ ...r, pieces: { count: 6, everyMs: 200 } });

const A1 = 'The login form posts to the wrong endpoint; the fix is one line in redirect.ts and a test for it.';
const A2a = 'Let me check which files mention the endpoint before I change anything.';
const A2b = 'Two files mention it: redirect.ts and its test. Both now use the new endpoint.';
const A3 = 'Done. Nothing else refers to the old endpoint, so the change is complete.';

async function post(url: string, path: string, body: unknown): Promise<number> {
  const r = await fetch(`${url}/fleet/${THREAD}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'roost-name': 'Paul' }, body: JSON.stringify(body) });
  await r.text();
  return r.status;
}

interface Seen {
  kind: 'event' | 'stream';
  type: string;
  text: string;
  state?: string;
}

/** The session's frames in stream order: its stored events and its partial-text frames. */
function framesOf(frames: SseFrame[], id: string): Seen[] {
  const out: Seen[] = [];
  for (const f of frames) {
    const d = JSON.parse(f.data) as { event?: Record<string, unknown>; type?: unknown; id?: unknown; text?: unknown };
    if (f.event === 'event' && d.event?.id === id) out.push({ kind: 'event', type: String(d.event.type), text: typeof d.event.text === 'string' ? d.event.text : '', state: typeof d.event.state === 'string' ? d.event.state : undefined });
    else if (f.event === 'live' && d.type === 'session.stream' && d.id === id) out.push({ kind: 'stream', type: 'session.stream', text: String(d.text ?? '') });
  }
  return out;
}

test('no partial-text frame of a turn follows that turn: frames in order around every turn, with the real CLI', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, bridgeBuilt(), 'a build (npm run build)')) return;
  const model = await modelStandin([
    step(streamed(text(A1)), asked('PROMPT-ONE')),
    step(streamed({ content: [{ type: 'text', text: A2a }, { type: 'tool_use', id: 'toolu_frames', name: 'Bash', input: { command: 'echo redirect.ts', description: 'find files' } }] }), and(asked('PROMPT-TWO'), not(hasResult('toolu_frames')))),
    step(streamed(text(A2b)), hasResult('toolu_frames')),
    step(streamed(text(A3)), asked('PROMPT-THREE')),
  ]);
  const roost = await inProcess();
  const home = tempDir('roost-frames-home-');
  const root = tempDir('roost-frames-root-');
  const bridge = await startBridge(['--server', roost.url, '--root', root, '--thread', THREAD, '--claude', CLAUDE_BIN, '--approvals', 'off'], {
    HOME: home,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: 'test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  });
  const sse = await openSse(`${roost.url}/fleet/${THREAD}/stream`);
  try {
    assert.equal(await post(roost.url, '/requests', { type: 'request.start', id: 'f1', session: 'frames', flavor: 'plain' }), 200);
    await sse.waitFor((f) => f.event === 'event' && /"state":"idle"/.test(f.data), 60_000);
    const results = () => framesOf(sse.frames, 'f1').filter((s) => s.type === 'session.result').length;
    for (const [i, prompt] of ['PROMPT-ONE what is wrong with the login?', 'PROMPT-TWO find the files and fix them', 'PROMPT-THREE anything left?'].entries()) {
      assert.equal(await post(roost.url, '', { type: 'session.prompt', id: 'f1', text: prompt }), 200);
      await until(`the result of prompt ${i + 1}`, () => results() === i + 1, 60_000);
      // What the bridge still had buffered would arrive within its 150 ms relay period.
      await new Promise((r) => setTimeout(r, 600));
    }

    const seen = framesOf(sse.frames, 'f1');
    const wrong: string[] = [];
    let partial = ''; // the partial text since the last turn
    let frames = 0;
    for (const s of seen) {
      if (s.kind === 'stream') {
        partial += s.text;
        frames++;
      } else if (s.type === 'session.turn') {
        if (!s.text.startsWith(partial)) wrong.push(`partial text ${JSON.stringify(partial)} before the turn ${JSON.stringify(s.text)}`);
        partial = '';
      } else if (s.type === 'session.prompt' || s.type === 'session.result') {
        if (partial) wrong.push(`partial text ${JSON.stringify(partial)} after the last turn, before ${s.type}`);
        partial = '';
      }
    }
    if (partial) wrong.push(`partial text ${JSON.stringify(partial)} after the last turn`);
    assert.deepEqual(wrong, [], 'every partial frame comes before its own turn');
    assert.deepEqual(
      seen.filter((s) => s.type === 'session.turn').map((s) => s.text),
      [A1, A2a, A2b, A3],
      'the turns, whole',
    );
    assert.ok(frames >= 6, `partial text was relayed as it grew (${frames} frames)`);
    // Around every prompt: running, (partial text and turns), the result, then idle.
    const durable = seen.filter((s) => s.kind === 'event' && s.type !== 'session.spawn').map((s) => (s.type === 'session.status' ? `status ${s.state}` : s.type.replace('session.', '')));
    const tail = durable.slice(durable.indexOf('prompt'));
    assert.deepEqual(
      tail,
      ['prompt', 'status running', 'turn', 'result', 'status idle', 'prompt', 'status running', 'status running', 'turn', 'turn', 'result', 'status idle', 'prompt', 'status running', 'turn', 'result', 'status idle'],
    );
    t.diagnostic(`${frames} partial frames over 3 prompts (4 turns)`);
  } catch (e) {
    console.error(bridge.log());
    throw e;
  } finally {
    sse.close();
    await bridge.stop();
    await roost.close();
    await model.close();
  }
});
