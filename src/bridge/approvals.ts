// Approvals of the sessions the bridge runs (docs/bridge.md, Approvals):
// Claude Code asks before every tool call through a PreToolUse command hook
// (`hookCommand`), the hook asks a small HTTP server inside the bridge, and
// the bridge answers from the board: a request posted as `session.approval`
// pending, the first decision in the thread's log obeyed. On the server the
// request is an approval of kind `fleet` in the one approvals model, and the
// board's decision is the server's echo of its one decision
// (docs/approvals.md); `FLEET_NO_DECISION` on it means nobody decided. The
// bridge's `Roost-Bridge` and `Roost-Approval-Window` headers (client.ts)
// make it the holder of its requests and set their window.
//
// Invariants (it fails closed):
// - a tool call that needs approval runs only if the first decision in the
//   thread's log allows it;
// - the window runs from the moment Claude Code asks; when it ends without a
//   decision the bridge posts its own denial (queued behind the request, so
//   the board never keeps a request open for a call that stopped waiting),
//   obeys whichever decision the log holds first for at most 5 s more, and
//   else denies, whether or not Roost is reachable;
// - an ended session, an unreachable or failing bridge, or a garbled answer
//   all deny: the hook never errors (an erroring hook would let Claude Code's
//   own permission flow decide);
// - Claude Code never sees the bridge's token: with it, a tool call could
//   post its own decision. The hook URL it gets can only ask.

import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { digestInput, needsApproval } from '../core/approvals.js';
import { FLEET_NO_DECISION } from '../core/fleet.js';
import { BOARD_COMMAND_MAX } from '../core/fleet-wire.js';
import { formatWindow } from '../core/window.js';
import type { SpaceLink } from './work.js';
import { oneLine, type Board } from './board.js';
import type { ApprovalSide, Run } from './runs.js';

/** The hook Claude Code runs before every tool call: asks the bridge, and denies on any failure. */
export function hookCommand(timeoutMs: number): string {
  const code = [
    'const http=require("http");let raw="";',
    'const deny=(r)=>{process.stdout.write(JSON.stringify({hookSpecificOutput:{hookEventName:"PreToolUse",permissionDecision:"deny",permissionDecisionReason:r}}));process.exit(0)};',
    'process.stdin.on("data",(d)=>raw+=d);process.stdin.on("end",()=>{const u=process.env.ROOST_BRIDGE_HOOK_URL;if(!u)deny("no Roost bridge to ask: denied");',
    'const q=http.request(u,{method:"POST",headers:{"content-type":"application/json"}},(res)=>{let b="";res.on("data",(d)=>b+=d);res.on("end",()=>{',
    'try{const j=JSON.parse(b);if(res.statusCode===200&&j.hookSpecificOutput){process.stdout.write(b);process.exit(0)}}catch(e){}',
    'deny("the Roost bridge gave no decision: denied")})});',
    'q.on("error",(e)=>deny("the Roost bridge could not be reached ("+e.message+"): denied"));',
    `q.setTimeout(${timeoutMs},()=>q.destroy(new Error("no answer in time")));q.end(raw)})`,
  ].join('');
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return `${q(process.execPath)} -e ${q(code)}`;
}

type Decision = { decision: 'allow' | 'deny'; reason: string };
/** A decision from the board (who decided), or null: the session ended. */
type Outcome = { state: 'allowed' | 'denied'; by: string } | null;

function answer(d: Decision) {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: d.decision, permissionDecisionReason: d.reason } };
}

/** The part of a PreToolUse hook payload the bridge reads. */
interface HookPayload {
  tool_name?: unknown;
  tool_input?: unknown;
  tool_use_id?: unknown;
}

export interface ApprovalsOptions {
  /** Which tools need a member's decision (needsApproval's rules). */
  rules: string;
  windowMs: number;
  /** The thread the requests are on (a Work command's `blocked` report points there). */
  thread: string;
  /** The label the bridge posts under: its own window denial is not a member's decision. */
  name: string;
  /** The environment Claude Code runs in before the hook's URL is added (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

export class Approvals implements ApprovalSide {
  private server: Server | null = null;
  private url = '';
  private secret = randomBytes(16).toString('hex');
  /** Calls waiting for the board, by board session and request id. */
  private waiting = new Map<string, Map<string, (o: Outcome) => void>>();

  constructor(
    private opts: ApprovalsOptions,
    private board: Board,
    private runs: { get(id: string): Run | undefined },
    private work: () => SpaceLink | null,
  ) {}

  // ------------------------------------------------------------ the hook's side

  async listen(): Promise<void> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const m = /^\/hook\/([A-Za-z0-9_-]{1,64})$/.exec(url.pathname);
      if (req.method !== 'POST' || !m || url.searchParams.get('k') !== this.secret) return reply(404, {});
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        let payload: HookPayload = {};
        try {
          const j: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          if (typeof j === 'object' && j !== null) payload = j;
        } catch {}
        this.decide(m[1], payload).then(
          (d) => reply(200, answer(d)),
          (e) => reply(200, answer({ decision: 'deny', reason: `the Roost bridge failed (${(e as Error).message}): denied` })),
        );
      });
    });
    await new Promise<void>((ok) => this.server!.listen(0, '127.0.0.1', ok));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  /** Stops the hook's listener, cutting any call still waiting on it. */
  close(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise<void>((ok) => (this.server ? this.server.close(() => ok()) : ok()));
  }

  /** Claude Code's environment: the bridge's without its token, plus where the approval hook asks. */
  env(hookId: string): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...(this.opts.env ?? process.env), ROOST_BRIDGE_HOOK_URL: `${this.url}/hook/${hookId}?k=${this.secret}` };
    delete env.ROOST_TOKEN;
    return env;
  }

  /** `--settings` with the hook; its deadlines are longer than the window, so the bridge always answers first. */
  settings(): string {
    const timeoutMs = this.opts.windowMs + 60_000;
    return JSON.stringify({
      hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: hookCommand(timeoutMs), timeout: Math.ceil(timeoutMs / 1000) + 60 }] }] },
    });
  }

  // ------------------------------------------------------------ the board's side

  /** Wakes the calls whose request the board has settled (or whose session ended). */
  settle(): void {
    for (const [id, calls] of this.waiting) {
      const s = this.board.session(id);
      for (const [rid, wake] of calls) {
        if (!s || s.state === 'ended') {
          calls.delete(rid);
          wake(null);
          continue;
        }
        const a = s.approvals.find((x) => x.rid === rid);
        if (a && a.state !== 'pending') {
          calls.delete(rid);
          wake({ state: a.state, by: a.by });
        }
      }
      if (!calls.size) this.waiting.delete(id);
    }
  }

  /** The session ends: every call still waiting is denied. */
  cancel(runId: string): void {
    const calls = this.waiting.get(runId);
    if (!calls) return;
    this.waiting.delete(runId);
    for (const wake of calls.values()) wake(null);
  }

  /** A request id from Claude Code's tool_use_id (stable, so a retried post is the same request). */
  private ridOf(payload: HookPayload, run: Run): string {
    const raw = typeof payload.tool_use_id === 'string' ? payload.tool_use_id.replace(/[^A-Za-z0-9_-]/g, '') : '';
    return (raw || `call-${run.statuses}-${Date.now().toString(36)}`).slice(-64);
  }

  private async decide(id: string, payload: HookPayload): Promise<Decision> {
    // The window runs from the moment Claude Code asks, not from when the board
    // hears of it: a request that reached the board late would otherwise stay
    // open after the call it asks about had stopped waiting.
    const deadline = Date.now() + this.opts.windowMs;
    const tool = typeof payload.tool_name === 'string' ? payload.tool_name : 'tool';
    if (id.startsWith('hand_')) {
      // A hand-started session's headless run: nobody watches it, so nothing that needs approval runs.
      if (!needsApproval(this.opts.rules, tool)) return { decision: 'allow', reason: 'needs no approval under the bridge’s rules' };
      return { decision: 'deny', reason: `${tool} needs approval, and a command run in a hand-started session has nobody to ask: denied` };
    }
    const run = this.runs.get(id);
    if (!run || run.closing) return { decision: 'deny', reason: 'the session has ended in Roost: denied' };
    if (!needsApproval(this.opts.rules, tool)) return { decision: 'allow', reason: 'needs no approval under the bridge’s rules' };
    const rid = this.ridOf(payload, run);
    const digest = digestInput(tool, payload.tool_input, 200);
    const asking = oneLine(`needs approval: ${tool} ${digest}`, 200);
    // The request and the waiting status in one batch: the board never shows one without the other.
    const posting = this.board.post(
      '',
      [
        { type: 'session.approval', id, rid, session: run.name, tool: tool.slice(0, 120), digest, state: 'pending', ...commandOf(payload) },
        { type: 'session.status', id, state: 'waiting', activity: asking },
      ],
      this.board.key(id, 'approval', rid),
    );
    let lateTimer: NodeJS.Timeout | null = null;
    const late = new Promise<null>((ok) => (lateTimer = setTimeout(() => ok(null), Math.max(0, deadline - Date.now()))));
    const posted = await Promise.race([posting, late]);
    if (lateTimer) clearTimeout(lateTimer);
    if (posted && posted.status !== 200) return { decision: 'deny', reason: `Roost refused the approval request (${posted.json?.message ?? posted.status}): denied` };
    // No answer yet when the window ends (Roost is away, or slow): awaitDecision finds the window
    // over and ends it as any other, so a decision that does reach the log first is still obeyed.
    // A Work command shows it is blocked while it waits, and resumed once decided (whichever way).
    // The report points at the request on the board (thread, board session, rid), so a member can
    // decide from the Work view with the board's own post; the server adds the board's project.
    const w = posted && run.inflight?.kind === 'work' ? run.inflight.command : null;
    const approval = { thread: this.opts.thread, session: id, rid, tool: tool.slice(0, 120), digest };
    if (w) void this.work()?.execution(w, 'blocked', { reason: asking, approval }, `${w}:blocked:${rid}`);
    try {
      return await this.awaitDecision(run, id, rid, tool, digest, deadline, !posted);
    } finally {
      if (w) void this.work()?.execution(w, 'resumed', { rid }, `${w}:resumed:${rid}`);
    }
  }

  /** `unreached`: the request had not got through to Roost when the window ended. */
  private async awaitDecision(run: Run, id: string, rid: string, tool: string, digest: string, deadline: number, unreached: boolean): Promise<Decision> {
    const decided = new Promise<Outcome>((wake) => {
      let calls = this.waiting.get(id);
      if (!calls) this.waiting.set(id, (calls = new Map()));
      calls.set(rid, wake);
    });
    this.settle(); // it may be settled already (a replayed decision)
    let timer: NodeJS.Timeout | null = null;
    const window = new Promise<'window'>((ok) => (timer = setTimeout(() => ok('window'), Math.max(0, deadline - Date.now()))));
    let outcome = await Promise.race([decided, window]);
    if (timer) clearTimeout(timer);
    if (outcome === 'window') {
      // Nobody answered in time: say so on the board, and obey whichever decision the log holds
      // first, for at most 5 s more. The denial is not awaited: with Roost away it waits in the
      // post queue, behind the request itself (posts go out in order), and the call is denied
      // meanwhile; the board then shows the request closed by it, never one left open.
      void this.board.post('', { type: 'session.approval', id, rid, session: run.name, tool: tool.slice(0, 120), state: 'denied' }, this.board.key(id, 'approval', rid, 'window'));
      let grace: NodeJS.Timeout | null = null;
      outcome = await Promise.race([decided, new Promise<null>((ok) => (grace = setTimeout(() => ok(null), 5000)))]);
      if (grace) clearTimeout(grace);
      if (outcome?.state === 'denied' && (outcome.by === this.opts.name || outcome.by === FLEET_NO_DECISION)) {
        outcome = null;
      }
      if (!outcome) {
        this.waiting.get(id)?.delete(rid);
        if (!run.closing) this.board.status(run, 'running', `denied: ${tool} (${unreached ? 'Roost unreachable' : 'no decision'})`);
        const within = formatWindow(this.opts.windowMs);
        return {
          decision: 'deny',
          reason: `${unreached ? `Roost could not be reached within ${within} to ask` : `No decision in Roost within ${within}`}: denied (unanswered approvals count as a no)`,
        };
      }
    }
    if (!outcome) return { decision: 'deny', reason: 'the session has ended in Roost: denied' };
    if (outcome.state === 'denied' && outcome.by === FLEET_NO_DECISION) {
      // Roost closed the request with nobody's decision (its window passed, or this bridge was away too long).
      if (!run.closing) this.board.status(run, 'running', `denied: ${tool} (no decision)`);
      return { decision: 'deny', reason: 'Roost closed the request without a decision (its window passed, or the bridge was away): denied' };
    }
    if (outcome.state === 'allowed') {
      this.board.status(run, 'running', `${tool} ${digest}`);
      return { decision: 'allow', reason: `Allowed in Roost by ${outcome.by}` };
    }
    this.board.status(run, 'running', `denied: ${tool}`);
    return { decision: 'deny', reason: `Denied in Roost by ${outcome.by}` };
  }
}

/** A shell call's whole command, for its action class on the server (earned trust); none when too long to send. */
function commandOf(payload: HookPayload): { command?: string } {
  const input = payload.tool_input;
  const c = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>).command : undefined;
  return typeof c === 'string' && c.length <= BOARD_COMMAND_MAX ? { command: c } : {};
}
