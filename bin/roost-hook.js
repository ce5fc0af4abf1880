#!/usr/bin/env node
// @ts-check
// Roost's command hook for agent tools (Claude Code, Codex, Gemini CLI, Cursor).
// Dependency-free: node built-ins and Roost's own pure modules from dist/.
//
//   roost-hook.js <claude-code|codex|gemini-cli|cursor> --server URL
//                 [--approvals RULES] [--window 10m] [--team NAME] [--observe] [--skip-observe]
//                 [--token-env NAME]   (shared mode: send $NAME as a bearer token; default ROOST_TOKEN)
//   roost-hook.js --report-spool      (internal: sends the reports of denials made on its own; see below)
//
// Reads the hook payload on stdin and:
// - for a tool call that needs approval under RULES: posts it to the server,
//   which holds the request until a person decides or the window passes, and
//   prints the server's answer. On ANY failure (server unreachable, refused,
//   a bad answer, our own deadline) it prints a deny with the reason: approvals
//   fail safe (DESIGN rule 7). An agent tool's hook that errors or times out
//   does not block, so the deny must come from here;
// - for anything else: posts it for the floor with a short timeout and never
//   blocks or fails the agent (exits 0 even with no server); it prints
//   nothing unless the server answers with a decision of its own (a spent
//   budget denies the next tool call), which it passes on;
//   `--skip-observe` leaves that to another hook (Claude Code's http hooks).
// `--observe` never asks for approval (SessionStart and other notices).
// It always exits 0: a decision is given on stdout, never by exit code.
//
// While it holds a request it watches the agent that ran it: when that
// process is gone (killed with SIGKILL, so it could not end its hooks), the
// hook exits at once; its connection closes and the server withdraws the
// request (docs/approvals.md). An interrupted agent (Ctrl-C) ends its hooks
// itself (Claude Code sends SIGTERM to the hook's process group), with the
// same effect.
//
// A denial it made on its own because Roost could not be reached is kept in
// a spool folder (ROOST_HOOK_SPOOL, default ~/.roost/hook-reports) and sent
// by a detached reporter (`--report-spool`) once Roost answers again, so the
// server closes that request as withdrawn and refuses a late decision for a
// call that never ran. Any later hook run starts the reporter again if
// reports are still waiting (the machine restarted, or the server stayed
// away longer than the reporter tries).
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
const require = createRequire(import.meta.url);
const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');

const SHORT_TIMEOUT_MS = 1500;
const DEFAULT_WINDOW_MS = 10 * 60 * 1000;
/** How often the agent process is checked while a request is held. */
const PARENT_POLL_MS = 200;
/** How long a reporter keeps trying before it leaves the reports to a later hook run. */
const REPORTER_TRIES_MS = 15 * 60 * 1000;
/** Reports older than this are dropped unsent (the server's log has moved on). */
const REPORT_MAX_AGE_MS = 24 * 60 * 60 * 1000;
const SPOOL = process.env.ROOST_HOOK_SPOOL || path.join(os.homedir(), '.roost', 'hook-reports');

/**
 * The command line: the tool, the two switches, and every other `--name value` pair by name.
 * @typedef {{ tool: string, observe: boolean, skipObserve: boolean, [name: string]: string | boolean | undefined }} Args
 */
/**
 * A report of a denial made on our own, kept in the spool until the server hears it.
 * @typedef {{ key: string, server: string, tool: string, team: string, tokenEnv: string, at: number, why: string, payload: string }} Report
 */
/** An error as node's I/O gives it: maybe a `code`, maybe a `message`. @typedef {{ code?: string, message?: string } | null | undefined} IoError */

/** Reads a caught value as an I/O error (it may be anything thrown). @param {unknown} e @returns {IoError} */
const ioError = (e) => (e && typeof e === 'object' ? /** @type {IoError} */ (e) : null);

/** @param {string[]} argv @returns {Args} */
function parseArgs(argv) {
  /** @type {Args} */
  const o = { tool: argv[0] && !argv[0].startsWith('--') ? argv[0] : 'claude-code', observe: false, skipObserve: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--observe') o.observe = true;
    else if (a === '--skip-observe') o.skipObserve = true;
    else if (a.startsWith('--') && i + 1 < argv.length) o[a.slice(2)] = argv[++i];
  }
  return o;
}

/** @param {unknown} v @returns {number} */
function parseWindow(v) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(String(v ?? '').trim());
  if (!m) return DEFAULT_WINDOW_MS;
  const unit = m[2] ?? 'ms';
  return Math.round(Number(m[1]) * (unit === 'h' ? 3600000 : unit === 'm' ? 60000 : unit === 's' ? 1000 : 1));
}

/** @returns {Promise<string>} */
function readStdin() {
  return new Promise((ok) => {
    /** @type {Buffer[]} */
    const chunks = [];
    process.stdin.on('data', (c) => chunks.push(c));
    process.stdin.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', () => ok(''));
  });
}

/** Each tool's deny answer (mirrors src/integrations/others.ts decisionAnswer; used when that cannot load). */
/** @param {string} tool @param {any} payload @param {string} reason */
function denyAnswer(tool, payload, reason) {
  const name = payload && payload.hook_event_name;
  if (tool === 'gemini-cli') return { decision: 'deny', reason };
  if (tool === 'cursor') return { permission: 'deny', user_message: reason, agent_message: reason };
  if (tool === 'codex' && name === 'PermissionRequest') return { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: reason } } };
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } };
}

/** POSTs with node:http (lighter to load than fetch: this runs once per hook call). `onRequest` gets the request (to cut it). */
/**
 * @param {string} url @param {string} body @param {number} timeoutMs
 * @param {(req: import('node:http').ClientRequest) => void} [onRequest] @param {string} [env]
 * @returns {Promise<{ status: number, text: string }>}
 */
function post(url, body, timeoutMs, onRequest, env = tokenEnv) {
  /** @type {typeof import('node:http')} */
  const http = require(url.startsWith('https:') ? 'node:https' : 'node:http');
  return new Promise((ok, fail) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...authHeader(env) } }, (res) => {
      /** @type {Buffer[]} */
      const chunks = [];
      res.on('data', (/** @type {Buffer} */ c) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', fail);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`)));
    req.on('error', fail);
    if (onRequest) onRequest(req);
    req.end(body);
  });
}

let tokenEnv = 'ROOST_TOKEN';

/** Shared mode: the agent's token, from the variable `--token-env` names (default ROOST_TOKEN). */
/** @param {string} name @returns {Record<string, string>} */
function authHeader(name) {
  const token = process.env[name];
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** @param {unknown} obj */
function out(obj) {
  process.stdout.write(JSON.stringify(obj));
}

// ---------------------------------------------------------------- the agent process

/** `/proc/<pid>/stat` as {state, ppid, start, comm}, or null (gone, or no /proc). */
/** @param {number} pid @returns {{ comm: string, state: string, ppid: number, start: string } | null} */
function procStat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = s.lastIndexOf(')');
    const f = s.slice(close + 2).split(' ');
    return { comm: s.slice(s.indexOf('(') + 1, close), state: f[0], ppid: Number(f[1]), start: f[19] };
  } catch {
    return null;
  }
}

const SHELLS = /^(sh|bash|dash|zsh|ash|ksh|mksh|fish|busybox)$/;

/**
 * Calls `gone` once the agent that ran this hook has exited. Agents run a
 * hook command through a shell (`sh -c`), and a shell whose agent was killed
 * keeps waiting for us, so the agent is the shell's parent then. On Linux
 * the agent is checked through /proc (pid, start time, not a zombie);
 * elsewhere by signal 0 to its pid. Our own parent dying counts too.
 */
/** @param {() => void} gone @returns {() => void} */
function watchAgent(gone) {
  const parent = process.ppid;
  let agent = parent;
  /** @type {() => boolean} */
  let check;
  const p = procStat(parent);
  if (p) {
    if (SHELLS.test(p.comm) && p.ppid > 1) agent = p.ppid;
    const a = procStat(agent);
    check = () => {
      if (process.ppid !== parent) return false;
      const now = procStat(agent);
      return !!now && !!a && now.start === a.start && now.state !== 'Z' && now.state !== 'X';
    };
  } else {
    try {
      const { execFileSync } = require('node:child_process');
      const [ppid, comm] = execFileSync('ps', ['-o', 'ppid=,comm=', '-p', String(parent)], { encoding: 'utf8', timeout: 2000 }).trim().split(/\s+/, 2);
      if (comm && SHELLS.test(path.basename(comm)) && Number(ppid) > 1) agent = Number(ppid);
    } catch {}
    check = () => {
      if (process.ppid !== parent) return false;
      try {
        process.kill(agent, 0);
        return true;
      } catch (e) {
        return ioError(e)?.code === 'EPERM';
      }
    };
  }
  const timer = setInterval(() => {
    if (!check()) {
      clearInterval(timer);
      gone();
    }
  }, PARENT_POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

// ---------------------------------------------------------------- reports of denials made on its own

/** Keeps a report until the reporter gets it through (a file per request, readable only by its owner). */
/** @param {Report} r @returns {boolean} */
function spoolReport(r) {
  try {
    fs.mkdirSync(SPOOL, { recursive: true, mode: 0o700 });
    const file = path.join(SPOOL, `${r.key}.json`);
    fs.writeFileSync(file + '.tmp', JSON.stringify(r), { mode: 0o600 });
    fs.renameSync(file + '.tmp', file);
    return true;
  } catch {
    return false;
  }
}

function spooled() {
  try {
    return fs.readdirSync(SPOOL).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
}

/** Starts a detached reporter unless one runs (it outlives this hook and the agent). */
function startReporter() {
  if (!spooled().length || reporterAlive()) return;
  try {
    const { spawn } = require('node:child_process');
    const c = spawn(process.execPath, [fileURLToPath(import.meta.url), '--report-spool'], { detached: true, stdio: 'ignore', env: process.env });
    c.unref();
  } catch {}
}

function lockFile() {
  return path.join(SPOOL, '.reporter.lock');
}

function reporterAlive() {
  try {
    const pid = Number(fs.readFileSync(lockFile(), 'utf8'));
    if (!pid) return false;
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return ioError(e)?.code === 'EPERM';
  }
}

/** The reporter: sends every spooled report, retrying with backoff while Roost is away. */
async function reportSpool() {
  try {
    fs.writeFileSync(lockFile(), String(process.pid), { flag: 'wx' });
  } catch {
    if (reporterAlive()) return;
    try {
      fs.unlinkSync(lockFile()); // a reporter that died left its lock
      fs.writeFileSync(lockFile(), String(process.pid), { flag: 'wx' });
    } catch {
      return;
    }
  }
  try {
    const until = Date.now() + REPORTER_TRIES_MS;
    let delay = 250;
    for (;;) {
      const files = spooled();
      if (!files.length) return;
      let failed = false;
      for (const f of files) {
        const file = path.join(SPOOL, f);
        let r;
        try {
          r = JSON.parse(fs.readFileSync(file, 'utf8'));
        } catch {
          try {
            fs.unlinkSync(file);
          } catch {}
          continue;
        }
        if (!r || typeof r.server !== 'string' || typeof r.key !== 'string' || Date.now() - r.at > REPORT_MAX_AGE_MS) {
          try {
            fs.unlinkSync(file);
          } catch {}
          continue;
        }
        const q = new URLSearchParams({ request: r.key, at: String(r.at) });
        if (r.team) q.set('team', r.team);
        try {
          const res = await post(`${r.server}/hooks/${r.tool}/denied?${q}`, r.payload || '{}', 10_000, undefined, r.tokenEnv || 'ROOST_TOKEN');
          // Delivered, or refused for good (a 4xx other than "later"): either way it is done.
          if (res.status < 500 && res.status !== 408 && res.status !== 429) fs.unlinkSync(file);
          else failed = true;
        } catch {
          failed = true;
        }
      }
      if (!failed) continue;
      if (Date.now() > until) return;
      await new Promise((ok) => setTimeout(ok, delay));
      delay = Math.min(delay * 2, 5000);
    }
  } finally {
    try {
      fs.unlinkSync(lockFile());
    } catch {}
  }
}

const o = parseArgs(process.argv.slice(2));

async function main() {
  const server = ((typeof o.server === 'string' && o.server) || process.env.ROOST_SERVER || 'http://127.0.0.1:4319').replace(/\/+$/, '');
  const te = o['token-env'];
  if (typeof te === 'string' && te) tokenEnv = te;
  const raw = await readStdin();
  /** @type {any} */
  let payload = null;
  try {
    payload = JSON.parse(raw);
  } catch {}
  const rules = typeof o.approvals === 'string' ? o.approvals : '';
  const team = typeof o.team === 'string' ? o.team : '';
  const windowMs = parseWindow(o.window);
  const q = new URLSearchParams();
  if (team) q.set('team', team);
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
      needs = !!integ.isDecisionPoint(o.tool, payload) && core.needsApproval(rules, /** @type {{ tool?: string }} */ (integ.mapHook(o.tool, payload)).tool || 'tool');
    } catch (e) {
      // Cannot tell (Roost not built?): with approvals configured, that is a no.
      out(denyAnswer(o.tool, payload, `Roost's hook could not load its rules (${ioError(e)?.message}): denied because approvals are required`));
      return;
    }
  }

  if (!needs) {
    // Observation only: the floor hears about it if the server is there; the agent never waits long.
    if (!o.skipObserve) {
      try {
        const r = await post(`${server}/hooks/${o.tool}?${q}`, raw || '{}', SHORT_TIMEOUT_MS);
        // The server answers `{}`, or a decision of its own (a spent budget's deny): that is passed on.
        if (r.status === 200 && /^\{\s*"/.test(r.text)) process.stdout.write(r.text);
      } catch {}
    }
    return;
  }

  q.set('hold', '1');
  // Our name for this request: the server derives the approval's id from it (with who we
  // are), so a report of a denial made on our own later closes that very request.
  const key = randomBytes(16).toString('hex');
  q.set('request', key);
  // Answer before the agent tool's own hook timeout (installed as window + 30 s).
  const deadline = windowMs + 20_000;
  /** @type {import('node:http').ClientRequest | null} */
  let held = null;
  const unwatch = watchAgent(() => {
    // The agent is gone: nobody reads our answer. Closing the connection withdraws the request.
    if (held) held.destroy();
    process.exit(0);
  });
  /** @param {string} reason @param {string} why */
  const ownDenial = (reason, why) => {
    out(denyAnswer(o.tool, payload, reason));
    spoolReport({ key, server, tool: o.tool, team, tokenEnv, at: Date.now(), why, payload: raw.length <= 1024 * 1024 ? raw : '{}' });
    startReporter();
  };
  try {
    const r = await post(`${server}/hooks/${o.tool}?${q}`, raw, deadline, (req) => (held = req));
    unwatch();
    if (r.status !== 200) {
      let msg = r.text.slice(0, 300);
      try {
        msg = JSON.parse(r.text).message || msg;
      } catch {}
      const reason = `Roost refused the approval request (${r.status}: ${msg}): denied because approvals are required`;
      // A refusal (4xx) is the server's own answer; a failure (5xx) is Roost not working: report it later.
      if (r.status >= 500) ownDenial(reason, `status ${r.status}`);
      else out(denyAnswer(o.tool, payload, reason));
      return;
    }
    const answer = JSON.parse(r.text);
    if (!answer || typeof answer !== 'object' || Object.keys(answer).length === 0) throw new Error('the server gave no decision');
    process.stdout.write(r.text);
  } catch (e) {
    unwatch();
    const err = ioError(e);
    const why = err?.code ? `could not be reached (${err.code})` : `gave no usable answer (${err?.message || String(e)})`;
    const reason = `Roost server at ${server} ${why}: denied because approvals are required`;
    if (err?.code) ownDenial(reason, err.code);
    else out(denyAnswer(o.tool, payload, reason));
  }
}

if (process.argv[2] === '--report-spool') {
  reportSpool().then(
    () => process.exit(0),
    () => process.exit(0),
  );
} else {
  // Reports still waiting from an earlier run go out now (cheap when there are none: one readdir).
  startReporter();
  run();
}

function run() {
  main().then(
    () => process.exit(0),
    (e) => {
      // Last resort: never leave a call that may need approval without an answer.
      try {
        out(denyAnswer(o.tool, null, `Roost's hook failed (${ioError(e)?.message}): denied`));
      } catch {}
      process.exit(0);
    },
  );
}
