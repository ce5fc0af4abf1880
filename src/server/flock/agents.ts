// Code items flown by a real coding agent (docs/flock.md, "Code items"): a
// crow's flight of a `code` item is a Claude Code session on a member's
// Space, started through the fleet board exactly as a member starts one
// (`request.start`, scoped: its own git worktree on branch `roost/<id>`),
// prompted with the item, and landed with the session's answer.
//
// One flight, in order, each step keyed so that a redo (a restart of the
// driving node mid-flight) stores nothing twice and finds what happened:
//   request.start (key `flock:<id>:start`) → the bridge's `session.spawn`
//   → session.prompt (key `flock:<id>:prompt`) → turns → `session.result`.
// The answer is the text of the last turn after the prompt (the bridge's
// result summary is figures, not text); the tokens are the result's usage
// (what Claude Code reported, every model), when the result's post reached
// this node. Failure is a landing with ok:false: the bridge refused, the
// session ended or its process died before a result, nothing within the
// timeout. A session that failed is closed (`session.end`), so nothing keeps
// running for an item that was given up; one that answered stays open on
// the board for its people to read, continue or close (closing removes the
// worktree and keeps the branch).
//
// Its permission requests are the board's, so they are approvals of kind
// `fleet` in the one inbox, like any board session's.

import { createHash } from 'node:crypto';
import type { FleetService } from '../fleet/service.js';
import type { BoardWatcher, Caller } from '../fleet/names.js';
import type { ResultUsage } from '../../core/fleet-wire.js';
import type { ModelErrorKind, ModelOutcome, ModelUsage } from '../../models/index.js';

/** Where a code flight runs: a board thread and the session's id on it (on `crow.flying` as `board`). */
export interface BoardRef {
  thread: string;
  session: string;
}

/** What the flock needs of its coding agents (one implementation: `BoardSessions`). */
export interface CodeAgents {
  /** The thread a new code flight would go to now (a bridge follows it on this node), or null: no agent, a model crow flies it. */
  thread(): string | null;
  /** The session of a flight: stable per (item, crow), so a redo finds the same one. */
  ref(thread: string, item_id: string, crow: string): BoardRef;
  /** Flies (or, after a restart, rejoins) one flight. Never rejects. */
  fly(ref: BoardRef, f: { name: string; prompt: string }): Promise<ModelOutcome>;
  /** Gives up every flight in the air (the node stops): they resolve ok:false and their sessions stay as they are. */
  stop(): void;
}

/** The flock's own name on the board: `request.start`'s requester, the session's `by`. */
export const FLOCK_CALLER: Caller = { name: 'flock' };

const NO_USAGE: ModelUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, estimated: false };

/** A result's usage as the flock counts it: every model's tokens of every kind (Claude Code's own figures). */
export function sessionUsage(u: ResultUsage | undefined): ModelUsage {
  if (!u) return NO_USAGE;
  const s = { ...NO_USAGE };
  for (const m of u.models) {
    s.input += m.input;
    s.output += m.output;
    s.cacheRead += m.cacheRead;
    s.cacheWrite += m.cacheWrite;
  }
  s.total = s.input + s.output + s.cacheRead + s.cacheWrite;
  return s;
}

export class BoardSessions implements CodeAgents {
  private flights = new Set<(why: string) => void>();

  constructor(
    private fleet: FleetService,
    private project: string,
    private opts: { timeoutMs: number },
  ) {}

  thread(): string | null {
    return this.fleet.followed(this.project)[0] ?? null;
  }

  ref(thread: string, item_id: string, crow: string): BoardRef {
    return { thread, session: 'flock-' + createHash('sha256').update(`${this.project}\n${item_id}\n${crow}`).digest('hex').slice(0, 20) };
  }

  stop(): void {
    for (const f of [...this.flights]) f('the server stopped');
  }

  fly(ref: BoardRef, f: { name: string; prompt: string }): Promise<ModelOutcome> {
    const { thread, session: id } = ref;
    return new Promise<ModelOutcome>((resolve) => {
      let unwatch: (() => void) | null = null;
      let done = false;
      let spawned = false;
      let prompted = false;
      let answer = '';
      const finish = (out: ModelOutcome, close?: string): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.flights.delete(give);
        unwatch?.();
        if (close) {
          // Nothing keeps running for an item that was given up (a session already ended says 409: nothing to close).
          void this.fleet.postAs(this.project, thread, FLOCK_CALLER, [{ type: 'session.end', id, reason: close.slice(0, 120) }], `flock:${id}:end`).catch(() => undefined);
        }
        resolve(out);
      };
      const fail = (kind: ModelErrorKind, message: string, usage = NO_USAGE, close?: string) =>
        finish({ ok: false, error: { kind, message, retryable: false }, usage, model: 'claude-code' }, close);
      const give = (why: string) => fail('aborted', why);
      this.flights.add(give);
      const timer = setTimeout(() => fail('timeout', `no result from the Claude Code session “${f.name}” within ${Math.round(this.opts.timeoutMs / 1000)} s`, NO_USAGE, 'flock: no result in time'), this.opts.timeoutMs);
      timer.unref();

      const prompt = () => {
        if (prompted || done) return;
        prompted = true;
        this.fleet.postAs(this.project, thread, FLOCK_CALLER, [{ type: 'session.prompt', id, text: f.prompt }], `flock:${id}:prompt`).catch((e: Error) => fail('unavailable', `the prompt was not taken: ${e.message}`, NO_USAGE, 'flock: the prompt was not taken'));
      };
      const hear: BoardWatcher = (e, _position, usage) => {
        if (done || e.id !== id) return;
        switch (e.type) {
          case 'request.refused':
            return fail('unavailable', `the bridge refused the session: ${String(e.reason ?? 'refused')}`);
          case 'session.spawn':
            spawned = true;
            return prompt();
          case 'session.prompt':
            // Ours (a rejoin reads it from the log): what follows it answers it.
            prompted = true;
            answer = '';
            return;
          case 'session.turn':
            if (prompted && typeof e.text === 'string' && e.text.trim()) answer = e.text;
            return;
          case 'session.result': {
            if (!prompted) return;
            const u = sessionUsage(usage);
            if (!answer.trim()) return fail('bad_response', 'the session answered with no text', u);
            return finish({ ok: true, kind: 'text', text: answer, usage: u, model: usage?.models[0]?.model ?? 'claude-code', stop: 'end' });
          }
          case 'session.status':
            if (spawned && e.state === 'dead') return fail('bad_response', `the session's Claude Code exited: ${String(e.activity ?? '')}`.trim(), NO_USAGE, 'flock: Claude Code exited');
            return;
          case 'session.end':
            return fail('bad_response', `the session ended before a result (${String(e.reason ?? 'closed')})`);
        }
      };
      void (async () => {
        try {
          const r = await this.fleet.requestAs(this.project, thread, FLOCK_CALLER, { type: 'request.start', id, session: f.name.slice(0, 80), flavor: 'scoped', root: '' }, `flock:${id}:start`);
          if (done) return;
          // From the request on: a rejoin reads what already happened, then what comes.
          const stop = await this.fleet.watch(this.project, thread, r.position - 1, hear);
          if (done) stop();
          else unwatch = stop;
        } catch (e) {
          fail('unavailable', `the session could not be started: ${(e as Error).message}`);
        }
      })();
    });
  }
}
