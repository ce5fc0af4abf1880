// `roost doctor`: what is wrong, before a person asks (README, "roost doctor").
//
// It looks at this machine and at the server, and says in one page:
// - the server: reachable, its version and mode;
// - per vendor (Claude Code, Codex, Gemini CLI): the CLI on PATH and its
//   version, whether it runs now (for this HOME), Roost's hooks in its user
//   and project settings (read as `roost hooks install` writes them:
//   src/cli/hooks.ts), the server they point at, telemetry on or off, and when
//   that vendor last reported (the server's floor: its agents' lastSeen);
// - a hook that went silent while its CLI still runs;
// - the bridge's Spaces (Work) and their last contact;
// - the project budgets near or over their limit.
// Plain text by default, `--json` for scripts. The exit code is 1 when
// something needs fixing (a "fail"), 0 otherwise ("warn" is advice).

import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseToml } from 'smol-toml';
import type { AgentTool } from '../integrations/index.js';
import { isRoostHandler, settingsPath } from './hooks.js';
import { codexConfigPath } from './telemetry.js';

type Json = Record<string, any>;

/** The vendors the doctor looks at, their commands, and how their processes look. */
const VENDORS: { tool: AgentTool; label: string; bin: string; pkg: string }[] = [
  { tool: 'claude-code', label: 'Claude Code', bin: 'claude', pkg: '@anthropic-ai/claude-code' },
  { tool: 'codex', label: 'Codex', bin: 'codex', pkg: '@openai/codex' },
  { tool: 'gemini-cli', label: 'Gemini CLI', bin: 'gemini', pkg: '@google/gemini-cli' },
];

/** A hook counts as silent when its CLI runs and nothing came from it for this long. */
export const SILENT_MS = 10 * 60_000;
/** A Space is quiet when nothing came from it for this long. */
export const SPACE_QUIET_MS = 15 * 60_000;

export interface Problem {
  level: 'fail' | 'warn';
  /** What it is about: `server`, a vendor's tool id, `space:<id>`, `budget:<project>`. */
  about: string;
  message: string;
  /** What to do. */
  fix: string;
}

export interface HookScope {
  scope: 'user' | 'project';
  path: string;
  installed: boolean;
  /** The server the hooks report to (from the handlers), when installed. */
  server: string | null;
  approvals: string | null;
  telemetry: 'on' | 'off';
  /** Where telemetry goes, when on. */
  telemetryTo: string | null;
  error?: string;
}

export interface VendorReport {
  tool: AgentTool;
  label: string;
  cli: { path: string | null; version: string | null; running: number[] };
  hooks: HookScope[];
  /** The newest lastSeen of this vendor's agents on any project's floor (ms), or null. */
  lastReport: number | null;
}

export interface DoctorReport {
  ok: boolean;
  at: number;
  server: { url: string; reachable: boolean; version: string | null; mode: string | null; store: string | null; error: string | null };
  vendors: VendorReport[];
  projects: { id: string; budget: { limitUsd: number; costUsd: number; share: number } | null; error?: string }[];
  spaces: { id: string; name: string; projects: string[]; lastContact: number | null }[];
  problems: Problem[];
}

export interface DoctorOptions {
  server: string;
  token?: string;
  home: string;
  /** The project directory whose settings are read (default: the current directory). */
  dir: string;
  /** The PATH the CLIs are looked up in. */
  path: string;
  now?: number;
  /** Lists running processes (pid, argv, HOME); default: /proc on Linux, nothing elsewhere. */
  processes?: () => { pid: number; argv: string[]; home: string | null }[];
}

function readJson(path: string): { value: Json | null; error?: string } {
  if (!existsSync(path)) return { value: null };
  try {
    const text = readFileSync(path, 'utf8');
    if (!text.trim()) return { value: {} };
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? { value: v } : { value: null, error: `${path} does not hold a JSON object` };
  } catch (e) {
    return { value: null, error: `${path}: ${(e as Error).message.split('\n')[0]}` };
  }
}

/** Roost's hooks in one settings file, read the way `roost hooks install` writes them. */
export function readHookScope(tool: AgentTool, scope: 'user' | 'project', path: string): HookScope {
  const out: HookScope = { scope, path, installed: false, server: null, approvals: null, telemetry: 'off', telemetryTo: null };
  const { value: settings, error } = readJson(path);
  if (error) out.error = error;
  const hooks = (settings?.hooks ?? {}) as Json;
  for (const list of Object.values(hooks)) {
    if (!Array.isArray(list)) continue;
    const handlers = list.flatMap((g: any) => (Array.isArray(g?.hooks) ? g.hooks : [g]));
    for (const h of handlers) {
      if (!isRoostHandler(tool, h)) continue;
      out.installed = true;
      const text = String(h.url ?? h.command ?? '');
      out.server ??= /^(https?:\/\/[^/]+)/.exec(String(h.url ?? ''))?.[1] ?? /--server (\S+)/.exec(text)?.[1]?.replace(/^'|'$/g, '') ?? null;
      out.approvals ??= /--approvals ('(?:[^']|'\\'')*'|\S+)/.exec(text)?.[1]?.replace(/^'|'$/g, '') ?? (/[?&]approvals=([^&]+)/.exec(text)?.[1] ? decodeURIComponent(/[?&]approvals=([^&]+)/.exec(text)![1]) : null);
    }
  }
  // Telemetry, where `roost hooks install` turns it on.
  if (tool === 'claude-code') {
    const env = settings?.env as Json | undefined;
    if (env && env.CLAUDE_CODE_ENABLE_TELEMETRY === '1' && typeof env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT === 'string') {
      out.telemetry = 'on';
      out.telemetryTo = env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT;
    }
  } else if (tool === 'gemini-cli') {
    const t = settings?.telemetry as Json | undefined;
    if (t && t.enabled === true && typeof t.otlpEndpoint === 'string') {
      out.telemetry = 'on';
      out.telemetryTo = t.otlpEndpoint;
    }
  } else if (tool === 'codex') {
    const cfg = codexConfigPath(path);
    if (existsSync(cfg)) {
      try {
        const toml: Json = parseToml(readFileSync(cfg, 'utf8'));
        const exp = toml.otel?.exporter as Json | undefined;
        const endpoint = exp?.['otlp-http']?.endpoint ?? exp?.['otlp-grpc']?.endpoint;
        if (typeof endpoint === 'string') {
          out.telemetry = 'on';
          out.telemetryTo = endpoint;
        }
      } catch (e) {
        out.error ??= `${cfg}: ${(e as Error).message.split('\n')[0]}`;
      }
    }
  }
  return out;
}

function which(bin: string, path: string): string | null {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, bin);
    if (existsSync(p)) return p;
  }
  return null;
}

function version(path: string): Promise<string | null> {
  return new Promise((ok) => {
    execFile(path, ['--version'], { timeout: 10_000, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout) => {
      if (err) return ok(null);
      const m = /\d+\.\d+\.\d+[\w.+-]*/.exec(stdout);
      ok(m ? m[0] : stdout.trim().split('\n')[0]?.slice(0, 60) || null);
    });
  });
}

/** Running processes from /proc (Linux): pid, argv and the HOME in their environment (readable for one's own). */
export function procProcesses(): { pid: number; argv: string[]; home: string | null }[] {
  if (!existsSync('/proc/self/cmdline')) return [];
  const out: { pid: number; argv: string[]; home: string | null }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
      if (argv.length === 0) continue;
      let home: string | null = null;
      try {
        home = /(?:^|\0)HOME=([^\0]*)/.exec(readFileSync(`/proc/${name}/environ`, 'utf8'))?.[1] ?? null;
      } catch {}
      out.push({ pid: Number(name), argv, home });
    } catch {}
  }
  return out;
}

/** Whether a process is this vendor's CLI: its command (or the script node runs) is the CLI's, by name or package. */
function isCli(argv: string[], v: (typeof VENDORS)[number]): boolean {
  return argv.slice(0, 2).some((a) => a.split('/').pop() === v.bin || a.includes(`/${v.pkg}/`));
}

async function getJson(url: string, token: string | undefined): Promise<{ status: number; json: Json | null; error?: string }> {
  try {
    const r = await fetch(url, { headers: { accept: 'application/json', 'roost-client': 'doctor', ...(token ? { authorization: `Bearer ${token}` } : {}) }, signal: AbortSignal.timeout(5000) });
    const text = await r.text();
    let json: Json | null = null;
    try {
      json = JSON.parse(text) as Json;
    } catch {}
    return { status: r.status, json };
  } catch (e) {
    return { status: 0, json: null, error: ((e as Error).cause as Error | undefined)?.message ?? (e as Error).message };
  }
}

export async function runDoctor(o: DoctorOptions): Promise<DoctorReport> {
  const now = o.now ?? Date.now();
  const server = o.server.replace(/\/+$/, '');
  const problems: Problem[] = [];
  const report: DoctorReport = { ok: true, at: now, server: { url: server, reachable: false, version: null, mode: null, store: null, error: null }, vendors: [], projects: [], spaces: [], problems };

  // The server.
  const health = await getJson(server + '/health', o.token);
  if (health.status === 200 && health.json) {
    report.server = { url: server, reachable: true, version: String(health.json.version ?? '') || null, mode: health.json.mode ?? 'local', store: health.json.store ?? null, error: null };
  } else {
    report.server.error = health.error ?? `answered ${health.status}`;
    problems.push({ level: 'fail', about: 'server', message: `${server} is not reachable (${report.server.error})`, fix: 'start it with `roost serve`, or pass --server URL (ROOST_SERVER)' });
  }

  // What the server knows: every project the caller reads, its floor and its budget; the caller's Spaces.
  const lastBySource = new Map<string, number>();
  const agentSeen = new Map<string, number>();
  if (report.server.reachable) {
    const projects = await getJson(server + '/api/v2/projects', o.token);
    const ids: string[] = projects.status === 200 && Array.isArray(projects.json?.projects) ? projects.json.projects.map((p: Json) => String(p.id)) : ['default'];
    if (projects.status === 401 || projects.status === 403) {
      problems.push({ level: 'fail', about: 'server', message: `${server} refused the doctor (${projects.status}): it runs in shared mode`, fix: 'set ROOST_TOKEN to a token of yours (Settings → Tokens)' });
    }
    for (const id of ids.slice(0, 50)) {
      const q = `?project=${encodeURIComponent(id)}`;
      const floor = await getJson(server + '/state' + q, o.token);
      for (const a of (floor.json?.agents ?? []) as Json[]) {
        const seen = Number(a.lastSeen) || 0;
        const src = String(a.source ?? '');
        if (seen > (lastBySource.get(src) ?? 0)) lastBySource.set(src, seen);
      }
      const usage = await getJson(server + '/usage' + q, o.token);
      const st = usage.json?.state as Json | undefined;
      const b = st?.budget as Json | null | undefined;
      if (b && Number(b.limitMicros) > 0) {
        const cost = Number(st?.project?.costMicros ?? 0);
        const limit = Number(b.limitMicros);
        const share = cost / limit;
        report.projects.push({ id, budget: { limitUsd: limit / 1e6, costUsd: cost / 1e6, share } });
        const money = `${(cost / 1e6).toFixed(2)} $ of ${(limit / 1e6).toFixed(2)} $`;
        if (share >= 1) problems.push({ level: 'fail', about: `budget:${id}`, message: `project ${id} has spent its budget: ${money}`, fix: 'raise or clear it on the Cost page (PUT /usage/budget)' });
        else if (share >= 0.8) problems.push({ level: 'warn', about: `budget:${id}`, message: `project ${id} is near its budget: ${money} (${Math.floor(share * 100)}%)`, fix: 'raise it on the Cost page before agents are stopped' });
      } else report.projects.push({ id, budget: null, ...(usage.status !== 200 ? { error: `usage answered ${usage.status}` } : {}) });
      // The other budgets (a team's, an agent's, per day): near, spent or paused (the project's total is above).
      const others = await getJson(server + '/usage/budgets' + q, o.token);
      for (const x of ((others.json?.budgets ?? []) as Json[]).slice(0, 50)) {
        const limit = Number(x.limit) || 0;
        if (x.key === 'project::total' && x.unit === 'usd') continue;
        if (!limit) continue;
        const share = (Number(x.spent) || 0) / limit;
        const amount = (n: number) => (x.unit === 'tokens' ? `${Math.floor(n)} tokens` : `${(n / 1e6).toFixed(2)} $`);
        const what = `budget ${String(x.key).slice(0, 160)} of project ${id}: ${amount(Number(x.spent) || 0)} of ${amount(limit)}${x.period === 'day' ? ' today' : ''}`;
        if (x.pausedNow === true || share >= 1) problems.push({ level: 'fail', about: `budget:${id}`, message: `${what}: its agents are paused`, fix: 'raise or lift it on the Cost page (PUT /usage/budgets, POST /usage/budgets/lift)' });
        else if (share >= 0.8) problems.push({ level: 'warn', about: `budget:${id}`, message: `${what} (${Math.floor(share * 100)}%)`, fix: 'raise it on the Cost page before its agents are paused' });
      }
      const work = await getJson(server + '/api/v2/snapshot' + q, o.token);
      for (const a of (work.json?.state?.agents ?? work.json?.agents ?? []) as Json[]) {
        const s = String(a.space ?? '');
        const seen = Number(a.lastSeen) || 0;
        if (s && seen > (agentSeen.get(s) ?? 0)) agentSeen.set(s, seen);
      }
    }
    const spaces = await getJson(server + '/api/v2/spaces', o.token);
    for (const s of (spaces.json?.spaces ?? []) as Json[]) {
      const id = String(s.id);
      const last = agentSeen.get(id) ?? null;
      report.spaces.push({ id, name: String(s.name ?? id), projects: Array.isArray(s.projects) ? s.projects.map(String) : [], lastContact: last });
      if (last === null || now - last > SPACE_QUIET_MS) {
        problems.push({ level: 'warn', about: `space:${id}`, message: `Space ${s.name ?? id} ${last === null ? 'has reported no agent yet' : `last reported ${ago(now - last)} ago`}`, fix: 'is its bridge running? `roost bridge --server URL --root DIR --space NAME`' });
      }
    }
  }

  // Each vendor on this machine.
  const procs = (o.processes ?? procProcesses)();
  // The CLIs answer --version together (a CLI start can take seconds).
  const paths = VENDORS.map((v) => which(v.bin, o.path));
  const versions = await Promise.all(paths.map((p) => (p ? version(p) : Promise.resolve(null))));
  for (const [i, v] of VENDORS.entries()) {
    const path = paths[i];
    const running = procs.filter((p) => isCli(p.argv, v) && (p.home === null || resolve(p.home) === resolve(o.home))).map((p) => p.pid);
    const hooks = (['user', 'project'] as const).map((scope) => readHookScope(v.tool, scope, settingsPath(v.tool, { user: scope === 'user', project: o.dir, home: o.home })));
    const vr: VendorReport = { tool: v.tool, label: v.label, cli: { path, version: versions[i], running }, hooks, lastReport: lastBySource.get(v.tool) ?? null };
    report.vendors.push(vr);
    const installed = hooks.filter((h) => h.installed);
    const configDir = join(o.home, { 'claude-code': '.claude', codex: '.codex', 'gemini-cli': '.gemini', cursor: '.cursor' }[v.tool]);
    const present = path !== null || running.length > 0 || existsSync(configDir);
    for (const h of hooks) if (h.error) problems.push({ level: 'fail', about: v.tool, message: `${v.label}: ${h.error}`, fix: 'fix the file (it is not valid JSON), then `roost hooks install`' });
    if (installed.length === 0) {
      if (present) problems.push({ level: 'warn', about: v.tool, message: `${v.label} is on this machine but Roost's hooks are not installed (user or ${o.dir})`, fix: `roost hooks install --tool ${v.tool} --user` });
      continue;
    }
    for (const h of installed) {
      if (h.server && report.server.reachable && h.server.replace(/\/+$/, '') !== server) {
        problems.push({ level: 'warn', about: v.tool, message: `${v.label}'s ${h.scope} hooks report to ${h.server}, not ${server}`, fix: `roost hooks install --tool ${v.tool}${h.scope === 'user' ? ' --user' : ''} --server ${server}` });
      }
      if (h.telemetry === 'off') problems.push({ level: 'warn', about: v.tool, message: `${v.label}'s telemetry is off in ${h.path} (no tokens or cost)`, fix: `roost hooks install --tool ${v.tool}${h.scope === 'user' ? ' --user' : ''} (without --no-telemetry)` });
    }
    // A hook that went silent while its CLI runs.
    if (running.length > 0 && (vr.lastReport === null || now - vr.lastReport > SILENT_MS)) {
      const trust = v.tool === 'codex' ? ' Codex runs new hooks only once trusted: open /hooks in Codex.' : '';
      problems.push({
        level: 'fail',
        about: v.tool,
        message: `${v.label} runs (pid ${running.slice(0, 3).join(', ')}) but its hooks ${vr.lastReport === null ? 'never reported' : `last reported ${ago(now - vr.lastReport)} ago`}`,
        fix: `check that ${installed[0].server ?? server} is reachable from it, then restart ${v.bin}.${trust}`,
      });
    } else if (vr.lastReport === null && report.server.reachable) {
      problems.push({ level: 'warn', about: v.tool, message: `${v.label}'s hooks are installed but it never reported to ${server}`, fix: `start ${v.bin} in ${installed[0].scope === 'user' ? 'any project' : o.dir} and look again` });
    }
  }
  report.ok = !problems.some((p) => p.level === 'fail');
  return report;
}

export function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s} s`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min`;
  if (s < 48 * 3600) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

/** The report as a person reads it. */
export function doctorText(r: DoctorReport, home: string): string {
  const tilde = (p: string) => (home && p.startsWith(home + '/') ? '~' + p.slice(home.length) : p);
  const L: string[] = [];
  const s = r.server;
  L.push(`server       ${s.url}: ${s.reachable ? `roost ${s.version ?? '?'} (${s.mode ?? '?'} mode${s.store ? `, ${s.store}` : ''})` : `NOT REACHABLE (${s.error})`}`);
  for (const v of r.vendors) {
    L.push('');
    const cli = v.cli.path ? `${v.cli.version ?? 'version unknown'}${v.cli.running.length ? `, running (${v.cli.running.length})` : ', not running'}` : v.cli.running.length ? `running (${v.cli.running.length}), not on PATH` : 'not on PATH';
    L.push(`${v.label.padEnd(12)} ${cli}`);
    for (const h of v.hooks) {
      if (!h.installed) {
        L.push(`  ${h.scope.padEnd(8)}   hooks not installed (${tilde(h.path)})`);
        continue;
      }
      L.push(`  ${h.scope.padEnd(8)}   hooks installed in ${tilde(h.path)} → ${h.server ?? '?'}; approvals ${h.approvals ?? 'off'}; telemetry ${h.telemetry}`);
    }
    L.push(`  last report  ${v.lastReport === null ? 'never' : `${ago(r.at - v.lastReport)} ago`}`);
  }
  if (r.spaces.length) {
    L.push('');
    for (const sp of r.spaces) L.push(`space        ${sp.name} (${sp.projects.join(', ') || 'no project'}): last contact ${sp.lastContact === null ? 'never' : `${ago(r.at - sp.lastContact)} ago`}`);
  }
  const budgets = r.projects.filter((p) => p.budget);
  if (budgets.length) {
    L.push('');
    for (const p of budgets) L.push(`budget       ${p.id}: ${p.budget!.costUsd.toFixed(2)} $ of ${p.budget!.limitUsd.toFixed(2)} $ (${Math.floor(p.budget!.share * 100)}%)`);
  }
  L.push('');
  const fails = r.problems.filter((p) => p.level === 'fail');
  const warns = r.problems.filter((p) => p.level === 'warn');
  for (const p of [...fails, ...warns]) {
    L.push(`${p.level === 'fail' ? 'FAIL' : 'warn'}  ${p.message}`);
    L.push(`      fix: ${p.fix}`);
  }
  L.push(fails.length ? `${fails.length} to fix, ${warns.length} to look at` : warns.length ? `nothing to fix; ${warns.length} to look at` : 'all good');
  return L.join('\n') + '\n';
}

const USAGE = `usage: roost doctor [--server URL] [--project DIR] [--json]
  Checks the server, each agent CLI's Roost hooks, telemetry and last report, the bridge's Spaces and the budgets.
  Exit code 1 when something needs fixing.
`;

/** Runs the `doctor` verb: prints the report; returns the exit code. */
export async function doctorCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { server: { type: 'string' }, project: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const home = env.HOME || homedir();
  const r = await runDoctor({
    server: values.server ?? env.ROOST_SERVER ?? 'http://127.0.0.1:4319',
    token: env.ROOST_TOKEN || undefined,
    home,
    dir: resolve(values.project ?? '.'),
    path: env.PATH ?? '',
  });
  process.stdout.write(values.json ? JSON.stringify(r, null, 2) + '\n' : doctorText(r, home));
  return r.ok ? 0 : 1;
}
