// The sessions the bridge runs, as Work agents of its Space: what the Space
// reports about them, and the Work commands written into them (docs/work.md,
// Spaces and the bridge). The Space's wire (registration, feed, reports) is
// work.ts; the sessions themselves are runs.ts.
//
// Invariants:
// - a Work command is written into its session only after the server
//   accepted its `started` (it refuses a second start), and only when the
//   process is free, so a reconnect or a restart never runs a command twice;
// - the command in flight is written to the state file before `started` is
//   sent: a crash after it is reported as interrupted at the next start,
//   never run again;
// - the report that ends a command is written to the state file before it is
//   sent and kept there until the server answers it (2xx or a 4xx), so a stop
//   or a crash while the server is away sends it again, with the same key.

import { randomBytes } from 'node:crypto';
import { oneLine } from './board.js';
import type { HandStarted } from './hands.js';
import { display, type Run, type Runs, type WorkSide } from './runs.js';
import type { BridgeState, EndReport } from './state-file.js';
import type { DueCommand, Observation, SpaceLink } from './work.js';

/** A session as its Space reports it. */
export function observation(run: Run): Observation {
  return { session: run.sid, label: run.name, pane: run.pane, cwd: oneLine(display(run.cwd), 900), origin: 'bridge', mode: run.flavor, state: run.inflight ? 'working' : 'idle' };
}

export class WorkPump implements WorkSide {
  /** The Space in Work (null when the server has none). */
  link: SpaceLink | null = null;
  /** Hand-started sessions (with `--hooks-port`). */
  hands: HandStarted | null = null;
  /** The due Work commands as the feed last sent them, and those this process already tried to start. */
  private due: DueCommand[] = [];
  private tried = new Set<string>();
  private pumping: Promise<void> = Promise.resolve();
  private runs!: Runs;

  constructor(
    private state: BridgeState,
    private log: (line: string) => void,
  ) {}

  /** The sessions (they and the pump need each other: set once both exist). */
  attach(runs: Runs): void {
    this.runs = runs;
  }

  // ------------------------------------------------------------ start-up

  /**
   * A crash left a standing agent's command running: it was interrupted, say
   * so (refused if it finished, or never started). Its own key, per attempt:
   * a refusal stored under `<command>:finished` would be the answer to the
   * real finish of a command that starts later, and one stored for an attempt
   * whose `started` never arrived would answer a later attempt's.
   */
  interrupted(): void {
    for (const a of this.state.data.agents ?? []) {
      if (!a.running) continue;
      const key = a.attempt ? `${a.running}:interrupted:${a.attempt}` : `${a.running}:interrupted`;
      (this.state.data.reports ??= []).push({ command: a.running, key, status: 'failed', result: 'interrupted: the bridge stopped before it finished' });
      delete a.running;
      delete a.attempt;
    }
  }

  /** What ended before the last stop or crash and was never answered: sent again, same key (forgotten without a Space). */
  async resend(): Promise<void> {
    if (this.link) for (const r of [...(this.state.data.reports ?? [])]) await this.deliver(r);
    else this.state.data.reports = [];
  }

  // ------------------------------------------------------------ what the Space reports

  /** The Space's full snapshot: every session it runs, and the hand-started ones it has heard of. */
  observations(): Observation[] {
    return [...this.runs.all().filter((r) => !r.closing).map(observation), ...(this.hands?.observations() ?? [])];
  }

  observe(run: Run): void {
    this.link?.observe(observation(run));
  }

  ended(run: Run, reason: string): void {
    this.link?.observe({ session: run.sid, ended: true, reason: oneLine(reason, 120) });
  }

  terminal(run: Run, text: string): void {
    this.link?.terminal(run.sid, text);
  }

  output(command: string, n: number, text: string): void {
    void this.link?.execution(command, 'output', { text: text.slice(0, 20_000) }, `${command}:output:${n}`);
  }

  /**
   * A command ended: its `finished` report is written to the state file (in
   * the same save that drops the command in flight) and kept there until the
   * server answers it, so a stop or crash while the server is away sends it
   * again at the next start.
   */
  finish(run: Run, command: string, status: 'done' | 'failed', result: string): void {
    if (!this.link) return void this.runs.remember(run);
    const r: EndReport = { command, key: `${command}:finished`, status, result: result.slice(0, 20_000) };
    (this.state.data.reports ??= []).push(r);
    void this.runs.remember(run, true);
    void this.deliver(r);
  }

  /** Posts an end report; forgets it once the server answered (2xx or a 4xx), keeps it when the connection closed first. */
  private async deliver(r: EndReport): Promise<void> {
    const answer = await this.link!.execution(r.command, 'finished', { status: r.status, result: r.result }, r.key);
    if (answer.status === 0) return;
    this.state.data.reports = (this.state.data.reports ?? []).filter((x) => x !== r);
    this.state.scheduleSave();
  }

  // ------------------------------------------------------------ the commands

  /** The feed's due set changed. */
  async onDue(commands: DueCommand[]): Promise<void> {
    this.due = commands;
    await this.pump();
  }

  wake(): void {
    void this.pump();
  }

  /** Starts what is due on the agents that are free: one pass at a time. */
  pump(): Promise<void> {
    const pass = async () => {
      for (const c of this.due) {
        if (this.tried.has(c.id) || this.runs.stopped) continue;
        const run = this.runs.bySid(c.session);
        if (run) {
          if (!run.inflight && !run.pending.length && !run.closing) await this.startWork(run, c);
          continue;
        }
        if (this.hands?.take(c) === 'started') this.tried.add(c.id);
      }
    };
    this.pumping = this.pumping.then(pass, pass);
    return this.pumping;
  }

  /** A Work command into a session: accepted by the server (`started`) first, then written as a prompt. */
  private async startWork(run: Run, c: DueCommand): Promise<void> {
    this.tried.add(c.id);
    run.inflight = { kind: 'work', command: c.id, by: c.by?.name ?? '', attempt: randomBytes(4).toString('hex') };
    // Written down before the server hears of it: a crash after `started` is then reported as interrupted.
    await this.runs.remember(run, true);
    const r = await this.link!.execution(c.id, 'started');
    if (r.status !== 200 || run.closing) {
      this.log(`did not start ${c.id}: ${r.json?.message ?? (run.closing ? 'the session is closing' : r.status)}`);
      if (run.closing) return; // close() reported its end
      run.inflight = null;
      // Refused about the state of things (not the head yet on this node, the agent busy): the key
      // `<command>:started` stays free, so the next due set that names it tries again with it.
      if (r.status === 409) this.tried.delete(c.id);
      // No answer (the connection closed while it was sent): it may have started; the state
      // file keeps it, so the next start reports it interrupted.
      if (r.status !== 0) void this.runs.remember(run);
      this.runs.next(run);
      return;
    }
    this.log(`${run.id}: running Work command ${c.id} from ${c.by?.name ?? 'someone'}`);
    this.link!.terminal(run.sid, `$ ${c.text.split('\n')[0].slice(0, 200)}\n`);
    this.runs.write(run, c.text, `Work command from ${c.by?.name ?? 'a teammate'}`);
  }
}
