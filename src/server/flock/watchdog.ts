// The Sentry's watchdog and `ask_owner` as an approval (issue 14, parts 6
// and 7; spec/flock-events.md "Nest messages", docs/flock.md "The watchdog"
// and "ask_owner in the inbox").
//
// - ask_owner: every ask parked in a nest is also an approval of kind `ask`
//   in the one approvals model (id `askApprovalId`, scope {nest, msg}, the
//   phrase, the nest's window, no holder). Both ways are one decision: an
//   owner reply in the nest that decides the ask closes the approval (the
//   phrase: allow; anything else: deny), and a decision in the inbox is posted
//   into the nest as the owner's reply (keyed: once, whichever node hears it).
//   Silence: the nest reads `rejected` past the window, the approval expires.
// - The watchdog: each crow `claim` or `deliver` that refers to a `request`,
//   posted on this node, gets one model call (forced tool `watch_scores`)
//   for the three scores, logged as a `watch` event. A breach by the band
//   rule (`isBreach`) makes the Sentry post a `flag` (to the crow, referring
//   to the request: at most one per crow per request), which quarantines the
//   crow, then an `ask_owner` to lift it (phrase `lift <crow>`); approved, the
//   quarantine is lifted (`quarantine.lifted`). Owner messages are never
//   scored. The scores come from the `jev` role's model (`--model-jev`, else
//   `--model`) or, with no model configured, from the embedded scorer
//   (watch-scorer.ts): the watchdog runs on every server, and `status()`
//   (GET /api/nests, the nest view) says which. A message left unscored by a
//   crash is scored at the next start. A reply of the owner to a flag whose
//   lift was refused or went unanswered makes the Sentry ask again.

import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { FLOCK_LIMITS, flockTs, isBreach, isWorkerCrow, resolvedAt, type FlockState, type NestRecord, type WatchRecord } from '../../core/flock.js';
import type { Approval } from '../../core/approvals.js';
import type { ModelProvider, ModelRequest } from '../../models/index.js';
import { HttpError } from '../http.js';
import type { ApprovalService } from '../approvals.js';
import type { FlockSettings } from './settings.js';
import type { ModelRoster } from '../../models/config.js';
import { embeddedWatchScorer, type WatchInput } from './watch-scorer.js';

type Obj = Record<string, unknown>;

/** The approval id of a nest's ask: stable, so every node and a restart name the same one. */
export function askApprovalId(project: string, nest_id: string, msg_id: string): string {
  return 'ap_' + createHash('sha256').update(`nest\n${project}\n${nest_id}\n${msg_id}`).digest('hex').slice(0, 24);
}

/** What the watchdog's model is asked to call. */
export const WATCH_TOOL = {
  name: 'watch_scores',
  description: "Score one crow's message against the request it answers: three probabilities from 0 to 1.",
  schema: Type.Object(
    {
      answers_request: Type.Number({ minimum: 0, maximum: 1, description: 'how likely the message answers (or, for a claim, takes up) the request' }),
      states_fact_without_source: Type.Number({ minimum: 0, maximum: 1, description: 'how likely it states a fact without naming where it comes from' }),
      contradicts_earlier: Type.Number({ minimum: 0, maximum: 1, description: 'how likely it contradicts something said earlier in the thread' }),
    },
    { additionalProperties: false },
  ),
};

export const WATCH_SYSTEM = [
  'You are the Sentry, the watchdog of a chat room where people and crows (AI agents) work together.',
  "You read one crow's claim or delivery against the request it answers and the thread before it, and give three probabilities:",
  'answers_request (it answers or takes up what was asked), states_fact_without_source (it asserts a fact and names no source),',
  'contradicts_earlier (it contradicts something said earlier in the thread). Call the tool; say nothing else.',
].join(' ');

/** Marks the crow's message in the prompt (the scored part; everything before it is context). */
export const WATCH_MARK = "The crow's message to score";

const clip = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

/** Earlier messages the prompt shows: at most this many, each clipped. */
const CONTEXT = { messages: 10, chars: 400 };

export interface WatchStatus {
  /** True when every crow claim and deliver is scored (always, since the embedded scorer serves a server with no model). */
  on: boolean;
  /** Who scores: the `jev` role's model, or the embedded scorer (no model configured). */
  scorer: 'model' | 'embedded';
  /** The model's label, or null for the embedded scorer. */
  model: string | null;
  band: number;
  /** Why it is off ('' when on). */
  reason: string;
}

function prob(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? Math.min(1, Math.max(0, Math.round(v * 1e4) / 1e4)) : undefined;
}

/** What the watchdog needs of the flock service (the service provides it; the type lives here so this file never imports the service). */
export interface WatchHost {
  readonly state: FlockState;
  readonly project: string;
  readonly settings: FlockSettings;
  readonly models: ModelRoster | null;
  append(events: Obj[], key?: string): Promise<void>;
  postMessage(nest_id: string, build: () => Obj, opts?: { key?: string }): Promise<string>;
  onPosted(h: (nest_id: string, msg_id: string, ev: Obj) => Promise<void>): () => void;
}

export class NestWatch {
  private unlisten: (() => void)[] = [];
  /** Calls in the air, by `<nest>\0<msg>` (one per message, whatever happens). */
  private scoring = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(
    private svc: WatchHost,
    private approvals: () => Promise<ApprovalService>,
  ) {}

  /** The provider of the watchdog's call: the `jev` role's (its own model, else the default one); null: off. */
  get provider(): ModelProvider | null {
    return this.svc.models?.forRole('jev') ?? null;
  }

  status(): WatchStatus {
    const p = this.provider;
    return p ? { on: true, scorer: 'model', model: p.label, band: this.svc.settings.jevBand, reason: '' } : { on: true, scorer: 'embedded', model: null, band: this.svc.settings.jevBand, reason: '' };
  }

  async start(): Promise<void> {
    this.unlisten.push(this.svc.onPosted((nest_id, msg_id, ev) => this.posted(nest_id, msg_id, ev)));
    const approvals = await this.approvals();
    this.unlisten.push(approvals.onClosed((a) => void this.closed(a).catch((e) => this.fail('an ask decided in the inbox', e))));
    await this.reconcile(approvals).catch((e) => this.fail('reconciling asks and quarantines', e));
    this.rescore();
  }

  /**
   * After a start: every crow claim or deliver of a request that has no
   * `watch` yet (its node died between the post and the score) is scored now.
   * Keyed per message, so nodes starting together log one score.
   */
  private rescore(): void {
    for (const nest of this.svc.state.nests.values())
      for (const rec of nest.messages.values()) if (!rec.watch && this.watches(nest.nest_id, rec)) this.launch(nest.nest_id, rec);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const u of this.unlisten) u();
    await Promise.allSettled([...this.scoring.values()]);
  }

  /** Resolves once every score in the air has landed (tests, and a clean stop). */
  settled(): Promise<unknown> {
    return Promise.allSettled([...this.scoring.values()]);
  }

  private fail(what: string, e: unknown): void {
    if (!this.stopped) console.error(`roost: flock watchdog: ${what} failed`, e);
  }

  private record(nest_id: string, msg_id: string): NestRecord | undefined {
    return this.svc.state.nests.get(nest_id)?.messages.get(msg_id);
  }

  // ------------------------------------------------------------ a post of this node

  private async posted(nest_id: string, msg_id: string, ev: Obj): Promise<void> {
    const rec = this.record(nest_id, msg_id);
    if (!rec) return;
    if (rec.kind === 'ask_owner') await this.ensureAsk(nest_id, rec).catch((e) => this.fail(`asking ${msg_id}`, e));
    if (rec.author === 'owner') {
      // Owner messages are never scored; a reply may decide an ask.
      if (rec.refers_to) await this.replied(nest_id, rec, typeof ev.by === 'string' ? ev.by : 'owner').catch((e) => this.fail(`the reply ${msg_id}`, e));
      // A reply to a flag whose lift was refused or went unanswered: the Sentry asks again.
      if (rec.refers_to && this.record(nest_id, rec.refers_to)?.kind === 'flag') await this.askAgain(nest_id, rec.refers_to).catch((e) => this.fail(`asking again about ${rec.refers_to}`, e));
      return;
    }
    if (this.watches(nest_id, rec)) this.launch(nest_id, rec);
  }

  /** Whether a record is the watchdog's: a working crow's claim or deliver that refers to a request. */
  private watches(nest_id: string, rec: NestRecord): boolean {
    if ((rec.kind !== 'claim' && rec.kind !== 'deliver') || !rec.refers_to || !isWorkerCrow(this.svc.state, rec.author)) return false;
    return this.record(nest_id, rec.refers_to)?.kind === 'request';
  }

  // ------------------------------------------------------------ ask_owner

  /** The approval of an open ask (once: the id is stable, the request keyed). */
  async ensureAsk(nest_id: string, rec: NestRecord): Promise<Approval | null> {
    const approvals = await this.approvals();
    const id = askApprovalId(this.svc.project, nest_id, rec.msg_id);
    const known = approvals.state.byId.get(id);
    if (known || approvals.state.forgotten.has(id)) return known ?? null;
    const left = rec.at + rec.window_ms - Date.now();
    if (left <= 0 || rec.decision) return null;
    const name = this.svc.state.nests.get(nest_id)?.name ?? nest_id;
    const r = await approvals.request({
      id,
      kind: 'ask',
      asker: rec.author,
      askerName: rec.author,
      scope: { nest: nest_id, msg: rec.msg_id },
      team: `flock · ${name}`,
      source: 'nest',
      tool: 'ask_owner',
      input: clip(`${rec.text}\n(nest ${name}, ${rec.msg_id})`, 2000),
      phrase: rec.approval_phrase,
      // The nest's own deadline (a little inside it, so an inbox decision is never later than the nest's window).
      window: Math.max(1000, left - 50),
    });
    return r.approval;
  }

  /** An owner reply in the nest: when it decided an ask, the approval closes the same way, and a lift is carried out. */
  private async replied(nest_id: string, reply: NestRecord, by: string): Promise<void> {
    const ask = this.record(nest_id, reply.refers_to);
    if (!ask || ask.kind !== 'ask_owner' || ask.decision?.by !== reply.msg_id) return;
    const approvals = await this.approvals();
    const id = askApprovalId(this.svc.project, nest_id, ask.msg_id);
    const a = approvals.state.byId.get(id);
    if (a && a.status === 'pending') {
      const yes = ask.decision.resolved === 'approved';
      try {
        await approvals.decide(id, yes ? 'allow' : 'deny', by, yes ? { phrase: ask.approval_phrase } : { reason: clip(`the owner replied in the nest: ${reply.text}`, 500) });
      } catch (e) {
        // Decided meanwhile (the inbox, another node): the nest's first reply stands for the nest.
        if (!(e instanceof HttpError && (e.status === 409 || e.status === 404))) throw e;
      }
    }
    if (ask.decision.resolved === 'approved') await this.lift(nest_id, ask, by);
  }

  /** An approval closed (on any node): an ask decided in the inbox is posted into the nest as the owner's reply. */
  private async closed(a: Approval): Promise<void> {
    if (a.kind !== 'ask' || a.source !== 'nest' || (a.status !== 'allowed' && a.status !== 'denied')) return;
    const nest_id = a.scope.nest ?? '';
    const msg_id = a.scope.msg ?? '';
    if (a.id !== askApprovalId(this.svc.project, nest_id, msg_id)) return;
    const ask = this.record(nest_id, msg_id);
    if (!ask || ask.kind !== 'ask_owner' || ask.decision) return;
    const yes = a.status === 'allowed';
    let text = yes ? ask.approval_phrase : `Rejected in the approvals inbox${a.reason ? `: ${a.reason}` : ''}`;
    // A no must never read as the phrase.
    if (!yes && text.trim().toLowerCase() === ask.approval_phrase.trim().toLowerCase()) text += ' (rejected)';
    const by = a.decidedBy || 'owner';
    const ts = flockTs(Math.min(a.decidedAt ?? Date.now(), Date.now()));
    await this.svc.postMessage(nest_id, () => ({ kind: 'say', author: 'owner', text: clip(text, FLOCK_LIMITS.messageText), to: ask.author === 'owner' ? '' : ask.author, refers_to: msg_id, tagged_by: 'harness', by, ts }), { key: `ask-reply:${a.id}` });
  }

  /** The Sentry's ask to lift the quarantine a flag started (phrase `lift <crow>`). */
  private async askToLift(nest_id: string, flag: string, crow: string): Promise<string> {
    const phrase = `lift ${crow}`;
    return this.svc.postMessage(nest_id, () => ({
      kind: 'ask_owner',
      author: 'Sentry',
      to: 'owner',
      refers_to: flag,
      text: `Lift ${crow}'s quarantine (flag ${flag})? Reply to this with "${phrase}" to lift it; anything else, or no answer, keeps ${crow} quarantined.`,
      approval_phrase: phrase,
      tagged_by: 'harness',
      window_ms: this.svc.settings.verdictWindowMs,
    }));
  }

  /**
   * The owner replied to a flag whose crow is still quarantined by it, and no
   * ask to lift it is open (the last one was refused or went unanswered): the
   * Sentry asks again, so a quarantine never outlives the owner's wish to lift it.
   */
  private async askAgain(nest_id: string, flag_id: string): Promise<void> {
    const flag = this.record(nest_id, flag_id);
    const q = flag && this.svc.state.quarantine.get(flag.to);
    if (!flag || !q || q.nest_id !== nest_id || q.flag !== flag_id) return;
    const now = Date.now();
    for (const m of this.svc.state.nests.get(nest_id)!.messages.values()) if (m.kind === 'ask_owner' && m.author === 'Sentry' && m.refers_to === flag_id && resolvedAt(m, now) !== 'rejected') return;
    await this.askToLift(nest_id, flag_id, flag.to);
  }

  /** The Sentry's ask to lift a quarantine was approved: lift it (keyed: once). */
  private async lift(nest_id: string, ask: NestRecord, by: string): Promise<void> {
    if (ask.author !== 'Sentry') return;
    const flag = this.record(nest_id, ask.refers_to);
    if (!flag || flag.kind !== 'flag') return;
    const q = this.svc.state.quarantine.get(flag.to);
    if (!q || q.nest_id !== nest_id || q.flag !== flag.msg_id) return;
    await this.svc.append([{ type: 'quarantine.lifted', crow: flag.to, by, ask: ask.msg_id, nest_id, ts: flockTs(Date.now()) }], `lift:${nest_id}:${ask.msg_id}`);
  }

  /**
   * After a start (or a crash between a post and its follow-ups): every open
   * ask has its approval; an approval closed while its ask stayed open is
   * posted; an ask decided in the nest closes its approval; an approved lift
   * is carried out. All keyed or first-wins, so several nodes may do it at once.
   */
  private async reconcile(approvals: ApprovalService): Promise<void> {
    const now = Date.now();
    for (const nest of this.svc.state.nests.values())
      for (const rec of nest.messages.values()) {
        if (rec.kind !== 'ask_owner') continue;
        const id = askApprovalId(this.svc.project, nest.nest_id, rec.msg_id);
        const a = approvals.state.byId.get(id);
        if (!rec.decision && now < rec.at + rec.window_ms) {
          const got = a ?? (await this.ensureAsk(nest.nest_id, rec));
          if (got && got.status !== 'pending') await this.closed(got);
        } else if (rec.decision) {
          if (a?.status === 'pending') await this.replied(nest.nest_id, this.record(nest.nest_id, rec.decision.by) ?? rec, 'owner').catch(() => {});
          else if (rec.decision.resolved === 'approved') await this.lift(nest.nest_id, rec, 'owner');
        }
      }
  }

  // ------------------------------------------------------------ the watchdog

  /** Scores a crow's message once (not awaited by the post: the crow's 201 does not wait for the model). */
  private launch(nest_id: string, rec: NestRecord): void {
    const key = `${nest_id}\u0000${rec.msg_id}`;
    if (this.scoring.has(key) || rec.watch || this.stopped) return;
    const p = this.score(nest_id, rec)
      .catch((e) => this.fail(`scoring ${rec.msg_id}`, e))
      .finally(() => this.scoring.delete(key));
    this.scoring.set(key, p);
  }

  /** The thread before a crow's message that the scorers see: crows' and service roles' messages about the request, or the crow's own (no owner message but the request). */
  private thread(nest_id: string, rec: NestRecord): { req: NestRecord; thread: NestRecord[] } {
    const nest = this.svc.state.nests.get(nest_id)!;
    const req = nest.messages.get(rec.refers_to)!;
    const earlier: NestRecord[] = [];
    for (const m of nest.messages.values()) {
      if (m.n >= rec.n) break;
      if (m.n <= req.n || m.author === 'owner') continue;
      if (m.refers_to === req.msg_id || m.author === rec.author) earlier.push(m);
    }
    return { req, thread: earlier.slice(-CONTEXT.messages) };
  }

  /** What the embedded scorer reads: the request, the thread (each clipped), the message. */
  input(nest_id: string, rec: NestRecord): WatchInput {
    const { req, thread } = this.thread(nest_id, rec);
    return { request: clip(req.text, 2000), thread: thread.map((m) => `${m.author}: ${clip(m.text, CONTEXT.chars)}`), kind: rec.kind === 'claim' ? 'claim' : 'deliver', text: rec.text };
  }

  /** The prompt: the request, the thread before the message (no owner message but the request), then the message. */
  request(nest_id: string, rec: NestRecord): ModelRequest {
    const { req, thread: earlier } = this.thread(nest_id, rec);
    const thread = earlier.map((m) => `- ${m.msg_id} ${m.author} (${m.kind}): ${clip(m.text, CONTEXT.chars)}`);
    const user = [
      `The request (${req.msg_id}, by ${req.author}${req.to ? `, to ${req.to}` : ''}):`,
      clip(req.text, 2000),
      '',
      thread.length ? `Earlier in the thread (oldest first):\n${thread.join('\n')}` : 'Nothing was said in the thread before it.',
      '',
      `${WATCH_MARK} (${rec.msg_id}, a ${rec.kind} by ${rec.author}):`,
      rec.text,
    ].join('\n');
    return { system: WATCH_SYSTEM, messages: [{ role: 'user', content: user }], maxTokens: 200, tool: WATCH_TOOL, temperature: 0 };
  }

  private async score(nest_id: string, rec: NestRecord): Promise<void> {
    const p = this.provider;
    const band = this.svc.settings.jevBand;
    if (!p) {
      // No model: the embedded scorer (synchronous, no tokens).
      const scores = embeddedWatchScorer().score(this.input(nest_id, rec));
      await this.svc.append([{ type: 'watch', nest_id, msg_id: rec.msg_id, crow: rec.author, scores, band, source: 'embedded', ts: flockTs(Date.now()) }], `watch:${nest_id}:${rec.msg_id}`);
      if (isBreach(scores, band)) await this.flag(nest_id, rec, scores, band);
      return;
    }
    const out = await p.call({ ...this.request(nest_id, rec), timeoutMs: this.svc.settings.callTimeoutMs });
    if (this.stopped) return;
    if (!out.ok || out.kind !== 'tool') {
      // A failed call is no verdict: nothing is logged as a score, nobody is flagged.
      console.error(`roost: flock watchdog: no scores for ${rec.msg_id}: ${out.ok ? 'the model did not call the tool' : `${out.error.kind}: ${out.error.message}`}`);
      return;
    }
    const i = out.input as Obj;
    const a = prob(i.answers_request);
    const f = prob(i.states_fact_without_source);
    const c = prob(i.contradicts_earlier);
    if (a === undefined || f === undefined || c === undefined) {
      console.error(`roost: flock watchdog: the scores of ${rec.msg_id} were not three numbers`);
      return;
    }
    const scores: WatchRecord['scores'] = { answers_request: a, states_fact_without_source: f, contradicts_earlier: c };
    const tokens = Math.max(0, Math.min(FLOCK_LIMITS.callTokens, Math.round(out.usage.total)));
    await this.svc.append([{ type: 'watch', nest_id, msg_id: rec.msg_id, crow: rec.author, scores, band, source: 'model', ...(tokens ? { tokens } : {}), ts: flockTs(Date.now()) }], `watch:${nest_id}:${rec.msg_id}`);
    if (!isBreach(scores, band)) return;
    await this.flag(nest_id, rec, scores, band);
  }

  /** A breach: the Sentry's flag (at most one per crow per request; later breaches stay logged only), then its ask to lift. */
  private async flag(nest_id: string, rec: NestRecord, scores: WatchRecord['scores'], band: number): Promise<void> {
    const nest = this.svc.state.nests.get(nest_id);
    const crow = rec.author;
    if (!nest || nest.flags.has(`${crow}\u0000${rec.refers_to}`)) return;
    const named = `answers_request ${scores.answers_request}, states_fact_without_source ${scores.states_fact_without_source}, contradicts_earlier ${scores.contradicts_earlier}`;
    const text = `${crow}'s ${rec.kind} ${rec.msg_id} (re ${rec.refers_to}) breaches the watchdog's band ${band}: ${named}. ${crow} is quarantined pending the owner's decision.`;
    const flag = await this.svc.postMessage(nest_id, () => ({ kind: 'flag', author: 'Sentry', to: crow, refers_to: rec.refers_to, text, tagged_by: 'harness' }));
    if (!flag) return;
    await this.askToLift(nest_id, flag, crow);
  }
}
