// Hand-started Claude Code sessions on the bridge's machine, as its Space
// observes them (docs/work.md): their hooks post to 127.0.0.1:<port>/hook,
// each session becomes a trusted-local agent (`origin: hook`) keyed by its
// `session_id`, and one its owner made callable takes a command by a
// headless resume.
//
// Why a headless resume: the bridge did not start the terminal the person
// types in and cannot type into it. When the session is idle (its last hook
// was `Stop` or `SessionStart`), a due command runs as
// `claude -p <text> --resume <session_id>` in the session's folder: the same
// conversation, continued, its turns reported as the execution. While the
// session is working, the command waits visibly in its queue and starts at
// the next `Stop`. Limits: the terminal the person has open does not show
// these turns until it is resumed again; a tool that needs approval is
// denied (nobody is watching that run); a session the bridge has not heard
// of since it started is not known to it.

import { createServer, type Server } from 'node:http';
import { basename } from 'node:path';
import { startClaude, type ChildTracker, type ClaudeProcess } from './claude.js';
import { succeeded, unknownOutput } from './claude-stream.js';
import type { DueCommand, Observation, SpaceLink } from './work.js';

export interface HandStartedOptions {
  /** The parts of the Space link it uses: it reports sessions and runs commands, nothing else. */
  space: Pick<SpaceLink, 'observe' | 'execution' | 'terminal'>;
  claude: string;
  /** The environment of a headless run (`hookId` names it to the approval hook). */
  env: (hookId: string) => NodeJS.ProcessEnv;
  /** `--settings` of a headless run (the approval hook). */
  settings: string;
  /** Sessions the bridge runs itself: their hooks are not hand-started sessions. */
  isOurs: (session: string) => boolean;
  /** A session became idle: a command may be due for it. */
  wake: () => void;
  log: (line: string) => void;
  /** Hears the headless runs start and end (the bridge records them: children.ts). */
  track?: ChildTracker;
}

interface Hand {
  label: string;
  cwd: string;
  mode: string;
  state: 'idle' | 'working' | 'blocked';
  /** The command its headless run executes now. */
  command: string | null;
  run: ClaudeProcess | null;
  /** Hooks of our own headless run end it; a SessionEnd before this time is that run's, not the person's. */
  quietUntil: number;
}

const SESSION = /^[A-Za-z0-9_.:-]{1,128}$/;
/** How many hand-started sessions it tracks at most (a new one beyond that is ignored until one ends). */
export const MAX_HANDS = 64;

export class HandStarted {
  /** Where hand-started sessions' hooks post. */
  url = '';
  private hands = new Map<string, Hand>();
  private server: Server | null = null;
  private stopped = false;
  private full = false;

  constructor(private opts: HandStartedOptions) {}

  /**
   * Listens on 127.0.0.1 for hook posts. Only what a hook command sends is
   * taken: a POST to `/hook` with `content-type: application/json`, no
   * `Origin` header and a loopback `Host`. A web page can still make a
   * browser send a request here: a cross-site one with that content type
   * needs a preflight, which is never granted (no CORS headers, ever); a
   * simple one (form or text content type) is refused before its body is
   * read; and a browser names the page's origin on every POST, so a page
   * that rebinds its own name to 127.0.0.1 is refused too.
   */
  listen(port: number): Promise<string> {
    const server = createServer((req, res) => {
      const refuse = (status: number, message: string) => {
        res.writeHead(status, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify({ message }));
        req.resume();
      };
      const path = (req.url ?? '').split('?')[0];
      const type = String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      const host = String(req.headers.host ?? '');
      const local = (server.address() as { port: number } | null)?.port;
      if (req.headers.origin !== undefined) return refuse(403, 'requests from web pages are refused');
      if (host !== `127.0.0.1:${local}` && host !== `localhost:${local}`) return refuse(403, 'only 127.0.0.1 is served');
      if (path !== '/hook') return refuse(404, 'hooks post to /hook');
      if (req.method !== 'POST') return refuse(405, 'hooks post to /hook');
      if (type !== 'application/json') return refuse(415, 'content-type must be application/json');
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => {
        if (raw.length < 1_000_000) raw += d;
      });
      req.on('end', () => {
        let e: unknown;
        try {
          e = JSON.parse(raw);
        } catch {
          return refuse(400, 'not a hook payload');
        }
        // Answered at once: a hand-started session never waits on Roost.
        if (!this.onHook(e)) return refuse(429, `already tracking ${MAX_HANDS} hand-started sessions`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    this.server = server;
    return new Promise((ok, fail) => {
      server.once('error', fail);
      server.listen(port, '127.0.0.1', () => {
        this.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
        ok(this.url);
      });
    });
  }

  has(session: string): boolean {
    return this.hands.has(session);
  }

  observations(): Observation[] {
    return [...this.hands].map(([session, h]) => this.observation(session, h));
  }

  private observation(session: string, h: Hand): Observation {
    return { session, label: h.label, cwd: h.cwd, mode: h.mode, state: h.command ? 'working' : h.state, origin: 'hook' };
  }

  /** Takes a hook event; false when it is a new session and MAX_HANDS are tracked already. */
  onHook(payload: unknown): boolean {
    const e: Partial<Record<string, unknown>> = typeof payload === 'object' && payload !== null && !Array.isArray(payload) ? (payload) : {};
    const session = typeof e.session_id === 'string' ? e.session_id : '';
    if (!SESSION.test(session) || this.opts.isOurs(session) || this.stopped) return true;
    const prev = this.hands.get(session);
    if (e.hook_event_name === 'SessionEnd') {
      if (!prev || prev.command || Date.now() < prev.quietUntil) return true;
      this.hands.delete(session);
      this.full = false;
      this.opts.space.observe({ session, ended: true, reason: typeof e.reason === 'string' ? `session ended (${e.reason.slice(0, 60)})` : 'session ended' });
      return true;
    }
    if (!prev && this.hands.size >= MAX_HANDS) {
      if (!this.full) this.opts.log(`ignoring hand-started session ${session}: ${MAX_HANDS} are tracked already (until one ends)`);
      this.full = true;
      return false;
    }
    const cwd = typeof e.cwd === 'string' ? e.cwd.slice(0, 900) : '';
    const state = e.hook_event_name === 'Stop' || e.hook_event_name === 'SessionStart' ? 'idle' : e.hook_event_name === 'PermissionRequest' ? 'blocked' : 'working';
    const h: Hand = {
      label: prev?.label ?? (cwd ? `${basename(cwd)} (by hand)` : 'by hand'),
      cwd: cwd || prev?.cwd || '',
      mode: typeof e.permission_mode === 'string' ? e.permission_mode.slice(0, 40) : (prev?.mode ?? ''),
      state,
      command: prev?.command ?? null,
      run: prev?.run ?? null,
      quietUntil: prev?.quietUntil ?? 0,
    };
    this.hands.set(session, h);
    if (!prev || prev.state !== h.state || prev.mode !== h.mode || prev.cwd !== h.cwd) this.opts.space.observe(this.observation(session, h));
    if (state === 'idle' && !h.command) this.opts.wake();
    return true;
  }

  /**
   * A due command for a hand-started session: runs it now if the session is
   * idle, else it waits. Null when the session is not one of these.
   */
  take(c: DueCommand): 'started' | 'waiting' | null {
    const h = this.hands.get(c.session);
    if (!h) return null;
    if (h.command || h.state !== 'idle' || this.stopped) return 'waiting'; // visibly queued until the next Stop
    void this.run(c, h);
    return 'started';
  }

  private async run(c: DueCommand, h: Hand): Promise<void> {
    const space = this.opts.space;
    h.command = c.id;
    const started = await space.execution(c.id, 'started');
    if (started.status !== 200) {
      h.command = null;
      return;
    }
    this.opts.log(`running ${c.id} in the hand-started session ${c.session} (headless resume)`);
    space.terminal(c.session, `$ ${c.text.split('\n')[0].slice(0, 200)}\n`);
    let texts: string[] = [];
    let outputs = 0;
    let last = '';
    let finished = false;
    const finish = (status: 'done' | 'failed', result: string) => {
      if (finished) return;
      finished = true;
      void space.execution(c.id, 'finished', { status, result: result.slice(0, 20_000) });
    };
    h.run = startClaude(
      this.opts.claude,
      ['-p', c.text, '--resume', c.session, '--output-format', 'stream-json', '--verbose', '--settings', this.opts.settings],
      {
        cwd: h.cwd || '.',
        env: this.opts.env(`hand_${c.session.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 58)}`),
        stdin: false,
        track: this.opts.track,
        what: `claude (headless) ${c.session}`,
        // Output in a format the bridge does not know: the run is ended (claude.ts) and fails with the reason.
        onUnknown: (what) => finish('failed', unknownOutput(what)),
      },
      (m) => {
        if (m.type === 'result') {
          const ok = succeeded(m);
          finish(ok ? 'done' : 'failed', m.result?.trim() ? m.result : last || (ok ? 'done' : `stopped (${m.subtype || 'error'})`));
        } else if (m.type === 'assistant' && !m.parent_tool_use_id) {
          const content = m.message.content;
          for (const b of content) {
            if (b.type !== 'text' || !b.text.trim()) continue;
            texts.push(b.text);
            last = b.text;
            space.terminal(c.session, b.text + '\n');
          }
          for (const b of content) if (b.type === 'tool_use') space.terminal(c.session, `> ${b.name} ${JSON.stringify(b.input ?? {}).slice(0, 300)}\n`);
        } else if (m.type === 'user' && !m.parent_tool_use_id) {
          const text = texts.join('\n\n').trim();
          texts = [];
          if (text) void space.execution(c.id, 'output', { text: text.slice(0, 20_000) }, `${c.id}:output:${++outputs}`);
        }
      },
      (why) => {
        finish('failed', why);
        h.run = null;
        h.command = null;
        h.quietUntil = Date.now() + 3000;
        this.opts.wake();
      },
      (l) => this.opts.log(`${c.session}: ${l}`),
    );
  }

  /** Stops listening, ends the headless runs (their executions fail) and reports the sessions ended: nobody observes them now. */
  async stop(reason: string): Promise<void> {
    this.stopped = true;
    for (const session of this.hands.keys()) this.opts.space.observe({ session, ended: true, reason });
    this.server?.closeAllConnections();
    await new Promise<void>((ok) => (this.server ? this.server.close(() => ok()) : ok()));
    await Promise.all(
      [...this.hands.values()].map((h) => {
        const p = h.run?.proc;
        if (!p || p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
        return new Promise<void>((ok) => {
          p.once('close', () => ok());
          p.kill('SIGTERM');
          setTimeout(() => p.kill('SIGKILL'), 3000).unref();
        });
      }),
    );
  }
}
