// A member's Space for Work (docs/work.md): runs Claude Code sessions on this
// machine as Work agents and executes the commands the project queues to them.
//
// The cycle, and why it is safe to repeat:
// - register the Space under a key derived from its name, so a restart finds
//   the same Space, not a second one;
// - start the sessions, each with its own `--session-id` (the stable key the
//   server knows it by), then report the FULL snapshot: agents of this Space
//   the server still shows but this process does not run are ended, not
//   deleted, so a reconnect never leaves ghosts and never duplicates a chat;
// - follow the command feed: the server sends the whole due set (the head of
//   each idle agent's queue) on connect and on every change, so a reconnect
//   replays exactly what has not started; `started` acknowledges a command;
// - every report is keyed by stable facts (`<command>:started`, `:output:<n>`,
//   `:finished`) and retried with its key until the server answers for good,
//   so nothing is stored twice.
//
// What it does not do (yet): tools that need a person's approval are denied,
// as Claude Code does in print mode without a permission prompt (fail closed).

import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { basename } from 'node:path';

export interface SpaceOptions {
  server: string;
  token?: string;
  /** The Space's name (its machine); also the key of its registration. */
  name: string;
  /** The project to contribute to and report into (omitted: the Space's only project). */
  project?: string;
  /** Contribute the Space to `project` at start (the token's person must own it: they do, they registered it). */
  contribute?: boolean;
  /** How many Claude Code sessions to run. */
  agents: number;
  /** The folder sessions run in. */
  cwd: string;
  /** The Claude Code executable. */
  claude: string;
  /** Extra arguments for every session (e.g. a permission mode). */
  claudeArgs?: string[];
  /** The environment of the sessions (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /**
   * Listen on 127.0.0.1:<port> (0: any free port) for Claude Code hook events
   * of sessions started by hand on this machine; they are reported as
   * `origin: hook` agents (trusted local). See docs/work.md for the hook line.
   */
  hookPort?: number;
  log: (line: string) => void;
}

interface Agent {
  session: string;
  label: string;
  proc: ChildProcess | null;
  /** The command running now, and the texts of its current turn. */
  command: string | null;
  texts: string[];
  outputs: number;
  lastText: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class SpaceConnector {
  id = '';
  private agents = new Map<string, Agent>();
  private abort: AbortController | null = null;
  private stopped = false;
  private queue: Promise<unknown> = Promise.resolve();
  private following: Promise<void> | null = null;
  /** Hand-started sessions seen through hooks, by session id. */
  private hooked = new Map<string, { label: string; cwd: string; mode: string; state: 'idle' | 'working' | 'blocked' }>();
  private hookServer: Server | null = null;
  /** Where hand-started sessions' hooks post (set by start when `hookPort` is given). */
  hookUrl = '';

  constructor(private opts: SpaceOptions) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { ...extra };
    if (this.opts.token) h.authorization = `Bearer ${this.opts.token}`;
    return h;
  }

  /** A POST retried with the same key until the server answers for good (2xx, or a 4xx but 408/429). */
  private async send(path: string, body: unknown, key?: string): Promise<{ status: number; json: any }> {
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await fetch(this.opts.server.replace(/\/+$/, '') + path, {
          method: 'POST',
          headers: this.headers({ 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) }),
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(15_000),
        });
        const json = await r.json().catch(() => null);
        if (r.ok || (r.status >= 400 && r.status < 500 && r.status !== 408 && r.status !== 429)) return { status: r.status, json };
      } catch {
        // network: retry with the same key
      }
      if (this.stopped && attempt > 2) return { status: 0, json: null };
      await sleep(Math.min(5000, 200 * 2 ** Math.min(attempt, 5)));
    }
  }

  /** Posts in order, one at a time (a command's started before its output before its finish). */
  private post(path: string, body: unknown, key?: string): Promise<{ status: number; json: any }> {
    const p = this.queue.then(() => this.send(path, body, key));
    this.queue = p.catch(() => undefined);
    return p;
  }

  async start(): Promise<void> {
    const reg = await this.send('/api/v2/spaces', { name: this.opts.name }, `space:${this.opts.name}`);
    if (reg.status !== 200) throw new Error(`could not register the Space: ${reg.json?.message ?? reg.status}`);
    this.id = reg.json.id;
    this.opts.log(`Space ${this.opts.name} is ${this.id}`);
    if (this.opts.contribute && this.opts.project) {
      const c = await this.send(`/api/v2/projects/${encodeURIComponent(this.opts.project)}/spaces`, { space: this.id });
      if (c.status !== 200 && c.status !== 409) throw new Error(`could not contribute the Space to ${this.opts.project}: ${c.json?.message ?? c.status}`);
    }
    for (let i = 0; i < this.opts.agents; i++) this.launch(`${this.opts.name} #${i + 1}`);
    if (this.opts.hookPort !== undefined) await this.listenForHooks(this.opts.hookPort);
    // Reconcile before following: the full snapshot ends what this process does not run.
    await this.report(true);
    this.following = this.follow();
  }

  private observation(a: Agent) {
    return { session: a.session, label: a.label, origin: 'bridge', cwd: this.opts.cwd.slice(0, 900), pane: a.proc?.pid ? `pid ${a.proc.pid}` : '', state: a.command ? 'working' : 'idle' };
  }

  private async report(full: boolean): Promise<void> {
    const hooked = [...this.hooked].map(([session, h]) => ({ session, label: h.label, cwd: h.cwd, mode: h.mode, state: h.state, origin: 'hook' }));
    const body: Record<string, unknown> = { full, agents: [...[...this.agents.values()].map((a) => this.observation(a)), ...hooked] };
    if (this.opts.project) body.project = this.opts.project;
    const r = await this.post(`/api/v2/spaces/${this.id}/agents`, body);
    if (r.status !== 200) this.opts.log(`report refused: ${r.json?.message ?? r.status}`);
  }

  private launch(label: string): Agent {
    const a: Agent = { session: randomUUID(), label, proc: null, command: null, texts: [], outputs: 0, lastText: '' };
    const args = ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--session-id', a.session, ...(this.opts.claudeArgs ?? [])];
    const proc = spawn(this.opts.claude, args, { cwd: this.opts.cwd, env: this.opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
    a.proc = proc;
    let buf = '';
    proc.stdout!.setEncoding('utf8');
    proc.stdout!.on('data', (d: string) => {
      buf += d;
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i).trim();
        buf = buf.slice(i + 1);
        if (!line) continue;
        try {
          this.onClaude(a, JSON.parse(line));
        } catch (e) {
          this.opts.log(`${a.label}: unreadable line from claude (${(e as Error).message})`);
        }
      }
    });
    let err = '';
    proc.stderr!.on('data', (d) => (err = (err + d).slice(-2000)));
    proc.stdin!.on('error', () => undefined);
    proc.on('close', (code, signal) => {
      if (a.proc !== proc) return;
      a.proc = null;
      const why = `claude exited (${signal ?? code})${err.trim() ? ': ' + err.trim().split('\n').slice(-1)[0] : ''}`;
      if (a.command) void this.post(`/api/v2/spaces/${this.id}/executions`, { command: a.command, event: 'finished', status: 'failed', result: why }, `${a.command}:finished`);
      a.command = null;
      if (this.stopped) return;
      this.opts.log(`${a.label}: ${why}`);
      this.agents.delete(a.session);
      void this.post(`/api/v2/spaces/${this.id}/agents`, { ...(this.opts.project ? { project: this.opts.project } : {}), agents: [{ session: a.session, ended: true, reason: why.slice(0, 200) }] });
    });
    this.agents.set(a.session, a);
    return a;
  }

  private onClaude(a: Agent, m: any): void {
    if (!m || typeof m !== 'object' || !a.command) return;
    const cmd = a.command;
    if (m.type === 'assistant' && !m.parent_tool_use_id) {
      for (const b of Array.isArray(m.message?.content) ? m.message.content : []) {
        if (b?.type === 'text' && typeof b.text === 'string' && b.text.trim()) {
          a.texts.push(b.text);
          a.lastText = b.text;
          this.terminal(a, b.text + '\n');
        } else if (b?.type === 'tool_use') this.terminal(a, `> ${b.name} ${JSON.stringify(b.input ?? {}).slice(0, 300)}\n`);
      }
      return;
    }
    if (m.type === 'user' && !m.parent_tool_use_id) {
      this.flushOutput(a, cmd);
      return;
    }
    if (m.type === 'result') {
      const ok = !m.is_error && m.subtype === 'success';
      const result = typeof m.result === 'string' && m.result.trim() ? m.result : a.lastText || (ok ? 'done' : `stopped (${m.subtype ?? 'error'})`);
      // The final text is the result; earlier turns were posted as output.
      a.texts = [];
      a.command = null;
      a.lastText = '';
      void this.post(`/api/v2/spaces/${this.id}/executions`, { command: cmd, event: 'finished', status: ok ? 'done' : 'failed', result: result.slice(0, 20_000) }, `${cmd}:finished`);
    }
  }

  /** A finished turn's text (before tool results) is a durable output line. */
  private flushOutput(a: Agent, cmd: string): void {
    const text = a.texts.join('\n\n').trim();
    a.texts = [];
    if (!text) return;
    const n = ++a.outputs;
    void this.post(`/api/v2/spaces/${this.id}/executions`, { command: cmd, event: 'output', text: text.slice(0, 20_000) }, `${cmd}:output:${n}`);
  }

  private terminal(a: Agent, data: string): void {
    // Lossy: one attempt, failures dropped.
    void fetch(this.opts.server.replace(/\/+$/, '') + `/api/v2/spaces/${this.id}/terminal`, {
      method: 'POST',
      headers: this.headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({ session: a.session, data: data.slice(0, 8000) }),
    }).catch(() => undefined);
  }

  /** Starts the due commands of idle agents. */
  private async onDue(commands: { id: string; session: string; text: string }[]): Promise<void> {
    for (const c of commands) {
      const a = this.agents.get(c.session);
      if (!a || a.command || !a.proc) continue;
      const r = await this.post(`/api/v2/spaces/${this.id}/executions`, { command: c.id, event: 'started' }, `${c.id}:started`);
      if (r.status !== 200) {
        this.opts.log(`could not start ${c.id}: ${r.json?.message ?? r.status}`);
        continue;
      }
      a.command = c.id;
      a.outputs = 0;
      a.texts = [];
      this.terminal(a, `$ ${c.text.split('\n')[0].slice(0, 200)}\n`);
      a.proc.stdin!.write(JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'text', text: c.text }] } }) + '\n');
    }
  }

  private async follow(): Promise<void> {
    while (!this.stopped) {
      this.abort = new AbortController();
      try {
        const r = await fetch(this.opts.server.replace(/\/+$/, '') + `/api/v2/spaces/${this.id}/commands`, { headers: this.headers({ accept: 'text/event-stream' }), signal: this.abort.signal });
        if (r.status !== 200 || !r.body) throw new Error(`the command feed answered ${r.status}`);
        this.opts.log('following the command feed');
        const dec = new TextDecoder();
        let buf = '';
        for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
          buf += dec.decode(chunk, { stream: true });
          let cut: number;
          while ((cut = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            if (!/^event: commands$/m.test(block)) continue;
            const data = block.split('\n').find((l) => l.startsWith('data: '));
            if (data) await this.onDue(JSON.parse(data.slice(6)).commands ?? []);
          }
        }
      } catch (e) {
        if (this.stopped) return;
        this.opts.log(`command feed down (${(e as Error).message}); reconnecting`);
      }
      if (this.stopped) return;
      await sleep(1000);
      // A reconnect reconciles first.
      await this.report(true).catch(() => undefined);
    }
  }

  /**
   * Claude Code hook events of hand-started sessions: each becomes (or
   * updates) a trusted-local agent keyed by its session id. Answers at once
   * with an empty object (the hook never waits on the server).
   */
  private listenForHooks(port: number): Promise<void> {
    const server = createServer((req, res) => {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => {
        if (raw.length < 1_000_000) raw += d;
      });
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        let e: any = null;
        try {
          e = JSON.parse(raw);
        } catch {
          return;
        }
        this.onHook(e);
      });
    });
    this.hookServer = server;
    return new Promise((ok, fail) => {
      server.once('error', fail);
      server.listen(port, '127.0.0.1', () => {
        this.hookUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
        this.opts.log(`hand-started sessions: point their hooks at ${this.hookUrl}`);
        ok();
      });
    });
  }

  private onHook(e: any): void {
    const session = typeof e?.session_id === 'string' ? e.session_id : '';
    if (!/^[A-Za-z0-9_.:-]{1,128}$/.test(session) || this.agents.has(session) || this.stopped) return;
    const project = this.opts.project ? { project: this.opts.project } : {};
    const path = `/api/v2/spaces/${this.id}/agents`;
    if (e.hook_event_name === 'SessionEnd') {
      if (!this.hooked.delete(session)) return;
      void this.post(path, { ...project, agents: [{ session, ended: true, reason: typeof e.reason === 'string' ? `session ended (${e.reason.slice(0, 60)})` : 'session ended' }] });
      return;
    }
    const cwd = typeof e.cwd === 'string' ? e.cwd.slice(0, 900) : '';
    const prev = this.hooked.get(session);
    const state = e.hook_event_name === 'Stop' || e.hook_event_name === 'SessionStart' ? 'idle' : e.hook_event_name === 'PermissionRequest' ? 'blocked' : 'working';
    const h = { label: prev?.label ?? (cwd ? `${basename(cwd)} (by hand)` : 'by hand'), cwd: cwd || prev?.cwd || '', mode: typeof e.permission_mode === 'string' ? e.permission_mode.slice(0, 40) : (prev?.mode ?? ''), state: state as 'idle' | 'working' | 'blocked' };
    if (prev && prev.state === h.state && prev.mode === h.mode && prev.cwd === h.cwd) return;
    this.hooked.set(session, h);
    void this.post(path, { ...project, agents: [{ session, label: h.label, cwd: h.cwd, mode: h.mode, state: h.state, origin: 'hook' }] });
  }

  /** Ends the sessions and reports them ended (their chats stay). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.abort?.abort();
    this.hookServer?.close();
    this.hooked.clear();
    const procs = [...this.agents.values()].map((a) => a.proc).filter((p): p is ChildProcess => !!p);
    await Promise.all(
      procs.map(
        (p) =>
          new Promise<void>((ok) => {
            p.once('close', () => ok());
            p.stdin!.end();
            p.kill('SIGTERM');
            setTimeout(() => p.kill('SIGKILL'), 3000).unref();
          }),
      ),
    );
    await this.queue;
    if (this.id) await this.send(`/api/v2/spaces/${this.id}/agents`, { ...(this.opts.project ? { project: this.opts.project } : {}), full: true, agents: [] });
    await this.following?.catch(() => undefined);
  }
}

export const SPACE_HELP = `roost space: this machine as a Work Space (docs/work.md)

usage:
  roost space --server URL --name NAME [--token T] [--project P] [--contribute]
              [--agents 1] [--cwd DIR] [--claude claude] [--permission-mode MODE]
              [--hooks-port N]   (hand-started Claude Code sessions report here)

Registers the Space (the token's person owns it), optionally contributes it to
--project, runs --agents Claude Code sessions in --cwd as Work agents, and
executes the commands the project queues to them. Stop with Ctrl-C: the
sessions end, their chats and results stay.
environment: ROOST_SERVER, ROOST_TOKEN, ROOST_CLAUDE_BIN
`;

export async function spaceCommand(argv: string[]): Promise<void> {
  const { parseArgs } = await import('node:util');
  const { hostname } = await import('node:os');
  const { values } = parseArgs({
    args: argv,
    options: {
      server: { type: 'string' },
      token: { type: 'string' },
      name: { type: 'string' },
      project: { type: 'string' },
      contribute: { type: 'boolean' },
      agents: { type: 'string' },
      cwd: { type: 'string' },
      claude: { type: 'string' },
      'permission-mode': { type: 'string' },
      'hooks-port': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(SPACE_HELP);
    return;
  }
  const server = values.server ?? process.env.ROOST_SERVER;
  if (!server) throw new Error(`--server is required\n\n${SPACE_HELP}`);
  const agents = Number(values.agents ?? 1);
  if (!Number.isInteger(agents) || agents < 0 || agents > 20) throw new Error('--agents is 0 to 20');
  const log = (l: string) => console.log(`[space ${new Date().toISOString().slice(11, 19)}] ${l}`);
  const space = new SpaceConnector({
    server,
    token: values.token ?? process.env.ROOST_TOKEN,
    name: (values.name ?? hostname()).slice(0, 100),
    project: values.project,
    contribute: values.contribute,
    agents,
    cwd: values.cwd ?? process.cwd(),
    claude: values.claude ?? process.env.ROOST_CLAUDE_BIN ?? 'claude',
    claudeArgs: values['permission-mode'] ? ['--permission-mode', values['permission-mode']] : [],
    hookPort: values['hooks-port'] !== undefined ? Number(values['hooks-port']) : undefined,
    log,
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log('stopping: ending the sessions');
    await space.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await space.start();
}
