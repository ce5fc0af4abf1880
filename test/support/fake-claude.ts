// A stand-in of the Claude Code CLI for bridge tests that need no model: it
// speaks stream-json on stdin/stdout like `claude -p --input-format
// stream-json`, answers each prompt with one text turn and a `result`
// (`done: <prompt>`), and holds a prompt containing `WAIT:<file>` until that
// file exists (so a test decides when a command finishes). A prompt with
// `ASK:<tool>` then asks the bridge's approval hook about a call of that tool,
// as Claude Code's PreToolUse hook does, and answers
// `asked: <decision> after <ms>ms: <reason>` instead. Before its answer, a
// prompt with `PRINT:<name>` prints one more line: `odd` a message of a type
// Claude Code does not have, `noise` a line that is not JSON, `rate` a
// `rate_limit_event` (a message Claude Code does print, read by no one).
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './server.js';

const SCRIPT = `
const { existsSync } = require('node:fs');
let buf = '';
let busy = 0;
let ended = false;
let n = 0;
const out = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
const answer = async (text) => {
  busy++;
  const w = /WAIT:(\\S+)/.exec(text);
  const until = Date.now() + 120000;
  while (w && !existsSync(w[1]) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  const id = 'msg_' + ++n;
  const print = /PRINT:(\\w+)/.exec(text);
  if (print && print[1] === 'odd') out({ type: 'assistant_v9', content: 'a format from the future' });
  if (print && print[1] === 'noise') process.stdout.write('Warning: something printed to stdout\\n');
  if (print && print[1] === 'rate') out({ type: 'rate_limit_event', rate_limit_info: { status: 'allowed' }, uuid: 'u1', session_id: 's1' });
  const ask = /ASK:(\\S+)/.exec(text);
  const reply = ask ? await askHook(ask[1], 'toolu_fake' + n) : 'done: ' + text;
  out({ type: 'assistant', message: { id, content: [{ type: 'text', text: reply }] } });
  out({ type: 'result', subtype: 'success', is_error: false, duration_ms: 1, num_turns: 1, result: reply });
  busy--;
  if (ended && !busy) process.exit(0);
};
const askHook = (tool, useId) => new Promise((ok) => {
  const t0 = Date.now();
  const body = JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: tool, tool_input: { command: 'echo hi' }, tool_use_id: useId });
  const req = require('node:http').request(process.env.ROOST_BRIDGE_HOOK_URL, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
    let b = '';
    res.on('data', (d) => (b += d));
    res.on('end', () => {
      let o = {};
      try { o = JSON.parse(b).hookSpecificOutput || {}; } catch {}
      ok('asked: ' + o.permissionDecision + ' after ' + (Date.now() - t0) + 'ms: ' + o.permissionDecisionReason);
    });
  });
  req.on('error', (e) => ok('asked: error ' + e.message));
  req.end(body);
});
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\\n')) >= 0) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    let m;
    try { m = JSON.parse(line); } catch { continue; }
    const c = m && m.message && m.message.content;
    const text = typeof c === 'string' ? c : Array.isArray(c) ? c.map((b) => (b && b.text) || '').join('') : '';
    void answer(text);
  }
});
process.stdin.on('end', () => { ended = true; if (!busy) process.exit(0); });
process.on('SIGTERM', () => process.exit(0));
`;

/** Writes the stand-in to a temp folder and returns its executable's path. */
export function fakeClaude(): string {
  const dir = tempDir('roost-fake-claude-');
  writeFileSync(join(dir, 'fake-claude.cjs'), SCRIPT);
  const bin = join(dir, 'claude');
  writeFileSync(bin, `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(dir, 'fake-claude.cjs'))} "$@"\n`);
  chmodSync(bin, 0o755);
  return bin;
}
