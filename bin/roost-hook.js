#!/usr/bin/env node
// Roost's command hook for agent tools (Claude Code, Codex, Gemini CLI, Cursor).
// Dependency-free: node built-ins and Roost's own pure modules from dist/.
//
//   roost-hook.js <claude-code|codex|gemini-cli|cursor> --server URL
//                 [--approvals RULES] [--window 10m] [--team NAME] [--observe] [--skip-observe]
//                 [--token-env NAME]   (shared mode: send $NAME as a bearer token; default ROOST_TOKEN)
//
// Reads the hook payload on stdin and:
// - for a tool call that needs approval under RULES: posts it to the server,
//   which holds the request until a person decides or the window passes, and
//   prints the server's answer. On ANY failure (server unreachable, refused,
//   a bad answer, our own deadline) it prints a deny with the reason: approvals
//   fail safe (DESIGN rule 7). An agent tool's hook that errors or times out
//   does not block, so the deny must come from here;
// - for anything else: posts it for the floor with a short timeout and never
//   blocks or fails the agent (prints nothing, exits 0 even with no server);
//   `--skip-observe` leaves that to another hook (Claude Code's http hooks).
// `--observe` never asks for approval (SessionStart and other notices).
// It always exits 0: a decision is given on stdout, never by exit code.
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);

const SHORT_TIMEOUT_MS = 1500;
const DEFAULT_WINDOW_MS = 10 * 60 * 1000;

function parseArgs(argv) {
  const o = { tool: argv[0] && !argv[0].startsWith('--') ? argv[0] : 'claude-code', observe: false, skipObserve: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--observe') o.observe = true;
    else if (a === '--skip-observe') o.skipObserve = true;
    else if (a.startsWith('--') && i + 1 < argv.length) o[a.slice(2)] = argv[++i];
  }
  return o;
}

function parseWindow(v) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(String(v ?? '').trim());
  if (!m) return DEFAULT_WINDOW_MS;
  const unit = m[2] ?? 'ms';
  return Math.round(Number(m[1]) * (unit === 'h' ? 3600000 : unit === 'm' ? 60000 : unit === 's' ? 1000 : 1));
}

function readStdin() {
  return new Promise((ok) => {
    const chunks = [];
    process.stdin.on('data', (c) => chunks.push(c));
    process.stdin.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', () => ok(''));
  });
}

/** Each tool's deny answer (mirrors src/integrations/others.ts decisionAnswer; used when that cannot load). */
function denyAnswer(tool, payload, reason) {
  const name = payload && payload.hook_event_name;
  if (tool === 'gemini-cli') return { decision: 'deny', reason };
  if (tool === 'cursor') return { permission: 'deny', user_message: reason, agent_message: reason };
  if (tool === 'codex' && name === 'PermissionRequest') return { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: reason } } };
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } };
}

/** POSTs with node:http (lighter to load than fetch: this runs once per hook call). */
function post(url, body, timeoutMs) {
  const http = require(url.startsWith('https:') ? 'node:https' : 'node:http');
  return new Promise((ok, fail) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...authHeader(tokenEnv) } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', fail);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`)));
    req.on('error', fail);
    req.end(body);
  });
}

let tokenEnv = 'ROOST_TOKEN';

/** Shared mode: the agent's token, from the variable `--token-env` names (default ROOST_TOKEN). */
function authHeader(name) {
  const token = process.env[name];
  return token ? { authorization: `Bearer ${token}` } : {};
}

function out(obj) {
  process.stdout.write(JSON.stringify(obj));
}

const o = parseArgs(process.argv.slice(2));

async function main() {
  const server = (o.server || process.env.ROOST_SERVER || 'http://127.0.0.1:4319').replace(/\/+$/, '');
  if (o['token-env']) tokenEnv = o['token-env'];
  const raw = await readStdin();
  let payload = null;
  try {
    payload = JSON.parse(raw);
  } catch {}
  const rules = o.approvals || '';
  const windowMs = parseWindow(o.window);
  const q = new URLSearchParams();
  if (o.team) q.set('team', o.team);
  if (rules) q.set('approvals', rules);
  q.set('window', String(windowMs));

  // Does this call need a person's yes? Decided with the same pure code the server uses.
  let needs = false;
  if (rules && !o.observe) {
    if (payload === null || typeof payload !== 'object') {
      out(denyAnswer(o.tool, payload, 'Roost could not read the hook payload: denied because approvals are required'));
      return;
    }
    try {
      const core = await import('../dist/src/core/approvals.js');
      const integ = await import('../dist/src/integrations/index.js');
      needs = integ.isDecisionPoint(o.tool, payload) && core.needsApproval(rules, integ.mapHook(o.tool, payload).tool || 'tool');
    } catch (e) {
      // Cannot tell (Roost not built?): with approvals configured, that is a no.
      out(denyAnswer(o.tool, payload, `Roost's hook could not load its rules (${e && e.message}): denied because approvals are required`));
      return;
    }
  }

  if (!needs) {
    // Observation only: the floor hears about it if the server is there; the agent never waits long.
    if (!o.skipObserve) {
      try {
        await post(`${server}/hooks/${o.tool}?${q}`, raw || '{}', SHORT_TIMEOUT_MS);
      } catch {}
    }
    return;
  }

  q.set('hold', '1');
  // Answer before the agent tool's own hook timeout (installed as window + 30 s).
  const deadline = windowMs + 20_000;
  try {
    const r = await post(`${server}/hooks/${o.tool}?${q}`, raw, deadline);
    if (r.status !== 200) {
      let msg = r.text.slice(0, 300);
      try {
        msg = JSON.parse(r.text).message || msg;
      } catch {}
      out(denyAnswer(o.tool, payload, `Roost refused the approval request (${r.status}: ${msg}): denied because approvals are required`));
      return;
    }
    const answer = JSON.parse(r.text);
    if (!answer || typeof answer !== 'object' || Object.keys(answer).length === 0) throw new Error('the server gave no decision');
    process.stdout.write(r.text);
  } catch (e) {
    const why = e && e.code ? `could not be reached (${e.code})` : `gave no usable answer (${(e && e.message) || e})`;
    out(denyAnswer(o.tool, payload, `Roost server at ${server} ${why}: denied because approvals are required`));
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    // Last resort: never leave a call that may need approval without an answer.
    try {
      out(denyAnswer(o.tool, null, `Roost's hook failed (${e && e.message}): denied`));
    } catch {}
    process.exit(0);
  },
);
