// Tokens and cost on the server: the OTLP/HTTP receiver (POST /v1/logs and
// /v1/metrics, JSON or protobuf), the project's `usage` stream folded by the
// shared usage fold (src/core/usage.ts), GET /usage and its live stream, and
// the project's budgets (per project, team or agent, in total or per day):
// their 80% notices and 100% pauses (docs/integrations.md, "Budgets").
//
// The order for one OTLP request (nothing is stored unless every step passes):
//   1. Content-Type (415), the body read up to OTLP_MAX_BYTES (413), gzip
//      inflated under the same cap (413);
//   2. decoded against the OTLP schema (400 with what is wrong; 413 past
//      OTLP_LIMITS.records records);
//   3. mapped (src/integrations/otlp.ts); each report's floor agent found
//      (the session, or the helper of the subagent the record names);
//   4. each record checked against what a real model can spend (PLAUSIBLE in
//      src/core/usage.ts: tokens and cost per record, tokens and cost per
//      session per minute of the server's clock) and, in shared mode, its
//      session against the sessions the hooks or the floor know; a record
//      that fails is not booked but counted in one `usage.refused` event;
//   5. one append of every new `usage` event (a record already counted, such
//      as an exporter's retry, is skipped by its key), each naming the
//      principal that reported it (`reporter`), then the budget check.
//
// Who a report belongs to: the session agent the hooks created
// (`claude-code:<session>`, `codex:<thread>`, `gemini:<session>`). A subagent
// is found by what the record says: Codex's subagent has its own thread id
// (its agent id on the floor); Claude Code and Gemini CLI name only its type,
// so it goes to the session's helper of that type the hooks saw running at
// the record's time (src/server/helper-windows.ts; else the busy one, else
// the latest). The hooks tell this service who they saw (`remember`), so a
// session that already left the floor (it is forgotten 6 s after
// SessionEnd, and exporters flush at exit) keeps its team.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { Type } from '@sinclair/typebox';
import { applyUsage, budgetKey, budgetPausedNow, budgetReason, budgetSpent, costOf, dayIn, dueCrossings, emptyUsage, pausedFor, validTimeZone, type Budget, type BudgetPeriod, type BudgetScope, type BudgetUnit, implausibleRecord, modelName, PLAUSIBLE, usageToJSON, USAGE_LIMITS, USAGE_PROTOCOL_VERSION, type UsageState } from '../core/usage.js';
import { principalKey, type Principal } from './access.js';
import { HelperWindows } from './helper-windows.js';
import { PRICE_TABLE } from '../core/prices.js';
import { readFile, stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import type { ResultUsage } from '../core/fleet-wire.js';
import { isAbsolute } from 'node:path';
import { dayOf, transcriptUsage, mapOtlpLogs, sessionAgentId, helperAgentId, GEMINI_PREFIX, toolOfService, type AgentTool, type DecisionReport, type UsageReport } from '../integrations/index.js';
import type { FloorState } from '../core/floor.js';
import type { EventStore, LogEntry } from '../storage/types.js';
import { HttpError, sendJson } from './http.js';
import { route, type Route } from './route.js';
import type { PerProject } from './scoped.js';
import type { FloorService } from './floor.js';
import type { ChannelOptions, Live, ScopeSpec } from './live/index.js';
import { FoldedStream, OnFoldHost } from './folded.js';
import { projectKey } from './floor.js';
import { decodeLogs, decodeMetrics, encodingOf, inflate, OTLP_MAX_BYTES, type OtlpEncoding } from './otlp-decode.js';

export const USAGE_STREAM = 'usage';

export function usageStream(project: string): string {
  return project === 'default' ? USAGE_STREAM : `${USAGE_STREAM}:${project}`;
}

export interface UsageOptions {
  live: Live;
  channel: ChannelOptions;
  maxReplay: number;
  /** The project (its stream is `usageStream(project)`, its live scope `usage:<project>`). */
  project: string;
  /** How long after Stop/SubagentStop a transcript is read (TRANSCRIPT_GRACE_MS). */
  transcriptGraceMs?: number;
}

/**
 * The flock's hook point: one provider call's usage (`ModelResult.usage` and
 * `.model` of src/models) as a report for `UsageService.record`. The key is
 * the call's own (list, item and crow make one); a crow is its own session.
 */
export function providerUsage(call: {
  key: string;
  agent: string;
  team: string;
  model: string;
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** The provider's own cost, when it reports one. */
  costUsd?: number;
  ts: number;
}): DirectUsage {
  const u = call.usage;
  return { key: call.key, via: 'flock', agent: call.agent, session: call.agent, team: call.team, source: 'flock', model: call.model, input: u.input, output: u.output, cacheRead: u.cacheRead, cacheWrite: u.cacheWrite, vendorUsd: call.costUsd, ts: call.ts };
}

/**
 * A transcript is read this long after the hook that names it: longer than
 * Claude Code's OTLP log export interval (5 s), so a session that exports
 * OTLP has been counted from OTLP by then, and its transcript is skipped.
 */
export const TRANSCRIPT_GRACE_MS = 7000;
/** A transcript larger than this is not read (a session's is far below). */
export const TRANSCRIPT_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Usage reported to the service directly (not over OTLP): a transcript's
 * messages, the bridge's results, the flock's provider calls. One request
 * each (or a batch: `requests`), keyed so a repeat is skipped.
 */
export interface DirectUsage {
  /** Unique per request within `via` (a message id, a call id). */
  key: string;
  via: 'transcript' | 'bridge' | 'flock';
  agent: string;
  parent?: string | null;
  /** The session agent (the agent itself for a top-level one). */
  session: string;
  team: string;
  /** The agent's source on the floor (`claude-code`, `flock`, …). */
  source: string;
  model: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** The vendor's own cost in USD, when it reports one; else the price table's. */
  vendorUsd?: number;
  requests?: number;
  ts: number;
}

/** The live scope `usage:<project>`: a viewer of the project reads it. */
export function usageScope(usage: PerProject<UsageService>): ScopeSpec {
  return {
    need: (project) => ({ project: projectKey(project), min: 'viewer' }),
    open: async (project) => (await usage.get(project)).channel,
  };
}

interface Identity {
  session: string;
  parent: string | null;
  team: string;
  role: string;
  /** The person whose hook reported it (shared mode: another person's token may not book to it). */
  uid?: string;
}

/** A bounded map that forgets its oldest entries (insertion order). */
class Recent<V> {
  private m = new Map<string, V>();
  constructor(private cap: number) {}
  get(k: string): V | undefined {
    return this.m.get(k);
  }
  has(k: string): boolean {
    return this.m.has(k);
  }
  set(k: string, v: V): void {
    this.m.delete(k);
    this.m.set(k, v);
    if (this.m.size > this.cap) this.m.delete(this.m.keys().next().value as string);
  }
}

function fold(state: UsageState, entry: LogEntry): string {
  const effects = applyUsage(state, JSON.parse(entry.body));
  return `{"event":${entry.body},"effects":${JSON.stringify(effects)}}`;
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((ok, fail) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      fail(new HttpError(413, 'too_large', `an OTLP body may be at most ${limit} bytes`));
      return;
    }
    const chunks: Buffer[] = [];
    let n = 0;
    req.on('data', (c: Buffer) => {
      n += c.length;
      if (n > limit) {
        req.removeAllListeners('data');
        req.resume();
        fail(new HttpError(413, 'too_large', `an OTLP body may be at most ${limit} bytes`));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => ok(Buffer.concat(chunks)));
    req.on('error', fail);
  });
}

export class UsageService extends OnFoldHost<UsageState> {
  protected readonly host: FoldedStream<UsageState>;
  readonly stream: string;
  readonly project: string;
  /** Keys of records already appended (an exporter's retry is skipped). */
  private seen = new Recent<true>(100_000);
  /** Who the hooks saw: agent id, and `<session>#<role>` / `codex#<thread>` for helpers. */
  private identities = new Recent<{ agent: string } & Identity>(20_000);
  /** When the hooks saw each helper, per session and type: a record naming only the type finds its own helper (src/server/helper-windows.ts). */
  private helperWindows = new HelperWindows();
  /**
   * Which source each session's usage comes from (`otlp`, `transcript`,
   * `bridge`, `flock`): the first one counted. Another source's records for
   * that session are skipped, so the same requests are never counted twice
   * (OTLP records and transcript lines share no request id to match on).
   */
  private sessionVia = new Recent<string>(20_000);
  /** Transcript reads waiting out their grace period. */
  /** Transcript reads waiting out their grace, by path: a later Stop for the same file moves its read, it does not add one. */
  private timers = new Map<string, NodeJS.Timeout>();
  private readonly transcriptGraceMs: number;
  /** Metric points received (checked, not added: log records are the usage source). */
  metricPoints = 0;
  /** OTLP tokens and cost booked per session in the current minute of this node's clock (PLAUSIBLE's per-minute caps). */
  private perMinute = new Recent<{ minute: number; tokens: number; costMicros: number }>(20_000);

  constructor(
    private store: EventStore,
    opts: UsageOptions,
  ) {
    super();
    this.stream = usageStream(opts.project);
    this.project = opts.project;
    this.transcriptGraceMs = opts.transcriptGraceMs ?? TRANSCRIPT_GRACE_MS;
    // No stored snapshots yet: a replay folds the stream from the start (one event per model request).
    this.host = new FoldedStream<UsageState>(
      store,
      {
        stream: this.stream,
        scope: `usage:${opts.project}`,
        empty: emptyUsage,
        step: (state, entry) => ({ state, events: [{ name: 'event', data: fold(state, entry) }] }),
        snapshot: (state, position, reset) => JSON.stringify({ protocol: USAGE_PROTOCOL_VERSION, epoch: this.store.epoch, position, reset, state: usageToJSON(state) }),
        applied: (entry) => {
          const e = JSON.parse(entry.body) as { id?: unknown; type?: unknown; session?: unknown; agent?: unknown; via?: unknown };
          if (typeof e.id === 'string') this.seen.set(e.id, true);
          // The first source a session's usage came from is its source from then on.
          const session = typeof e.session === 'string' && e.session ? e.session : typeof e.agent === 'string' ? e.agent : '';
          if (e.type === 'usage' && session && !this.sessionVia.has(session)) this.sessionVia.set(session, typeof e.via === 'string' ? e.via : 'otlp');
        },
      },
      { live: opts.live, channel: opts.channel, maxReplay: opts.maxReplay },
    );
  }


  override async start(): Promise<void> {
    this.host.listen();
    await this.host.start();
  }

  /** The hooks saw this agent (its session, parent, team and role): usage that names it later lands on it. */
  remember(agent: string, id: Identity, tool: string): void {
    if (!agent) return;
    const v = { agent, ...id };
    this.identities.set(agent, v);
    if (id.parent && id.role) {
      this.identities.set(`${id.session}#${id.role}`, v);
      this.helperWindows.seen(`${id.session}#${id.role}`, agent, Date.now());
    }
    if (tool === 'codex' && id.parent) this.identities.set(`codex#${agent.slice(agent.lastIndexOf('/') + 1)}`, v);
  }

  /** The floor agent a report belongs to, with its session, parent and team. */
  private resolve(tool: AgentTool, sessionId: string, subType: string, floor: FloorState, ts = 0): { agent: string } & Identity {
    const teamOf = (agentId: string): string | undefined => {
      const a = floor.agents.get(agentId);
      if (a) return floor.teams.get(a.team)?.name ?? a.team;
      return this.state.agents.get(agentId)?.team ?? this.identities.get(agentId)?.team;
    };
    if (tool === 'codex') {
      const own = sessionAgentId(sessionId, 'codex');
      const known = floor.agents.get(own) ?? this.state.agents.get(own) ?? this.identities.get(own);
      const helper = known ? undefined : this.identities.get(`codex#${own.slice('codex:'.length)}`);
      if (helper) return { agent: helper.agent, session: helper.session, parent: helper.parent, team: teamOf(helper.agent) ?? helper.team, role: helper.role };
      return { agent: own, session: own, parent: null, team: teamOf(own) ?? 'unknown', role: '' };
    }
    const session = sessionAgentId(sessionId, tool === 'gemini-cli' ? GEMINI_PREFIX : tool);
    const team = teamOf(session) ?? 'unknown';
    if (!subType) return { agent: session, session, parent: null, team, role: '' };
    // Two helpers of one type: the one the hooks saw running when the record was made.
    const timed = this.helperWindows.pick(`${session}#${subType}`, ts);
    if (timed) return { agent: timed, session, parent: session, team, role: subType };
    // The helper of that type: the busy one, else the latest (the floor's per-parent index).
    let pick: string | undefined;
    for (const kid of floor.index.children.get(session) ?? []) {
      const h = floor.agents.get(kid);
      if (!h || h.role !== subType) continue;
      const busy = h.leftAt === null && h.status !== 'done' && h.status !== 'offline' && h.status !== 'error';
      if (pick === undefined || busy || (floor.agents.get(pick)?.seq ?? 0) < h.seq) pick = kid;
      if (busy) break;
    }
    pick ??= this.identities.get(`${session}#${subType}`)?.agent ?? helperAgentId(session, subType);
    return { agent: pick, session, parent: session, team, role: subType };
  }

  private usageEvent(r: UsageReport, who: { agent: string } & Identity): Record<string, unknown> {
    const c = costOf(r.model, r, r.vendorUsd, this.state.prices);
    return {
      type: 'usage',
      id: `${r.tool}:${r.key}`.slice(0, USAGE_LIMITS.id),
      agent: who.agent,
      parent: who.parent ?? undefined,
      session: who.session,
      team: who.team,
      source: r.tool,
      model: r.model,
      day: r.day,
      input: r.input,
      output: r.output,
      cacheRead: r.cacheRead,
      cacheWrite: r.cacheWrite,
      costMicros: c.costMicros,
      costFrom: c.costFrom,
      ts: r.ts,
    };
  }

  private decisionEvent(d: DecisionReport, who: { agent: string } & Identity): Record<string, unknown> {
    return { type: 'usage', id: `${d.tool}:${d.key}`.slice(0, USAGE_LIMITS.id), agent: who.agent, parent: who.parent ?? undefined, session: who.session, team: who.team, source: d.tool, model: '', day: d.day, requests: 0, accepted: d.accepted ? 1 : 0, rejected: d.accepted ? 0 : 1, ts: d.ts };
  }

  /** Whether a session agent is one the hooks or the floor have seen (or whose usage is already booked). */
  private known(session: string, floor: FloorState): boolean {
    return floor.agents.has(session) || this.state.agents.has(session) || this.identities.has(session);
  }

  /**
   * Appends what a logs request reports; resolves with how many records were
   * new and how many were refused. `principal`: who sent it (shared mode
   * books only to sessions that exist and names the reporter on each event).
   */
  async ingestLogs(body: Buffer, enc: OtlpEncoding, floor: FloorState, principal: Principal | null = null): Promise<{ accepted: number; skipped: number; refused: number }> {
    const { usage, decisions } = mapOtlpLogs(decodeLogs(body, enc));
    const reporter = principalKey(principal);
    const events: Record<string, unknown>[] = [];
    const inRequest = new Set<string>();
    const refused = { records: 0, tokens: 0, costMicros: 0, reasons: new Map<string, number>() };
    const refuse = (reason: string, e: Record<string, unknown>) => {
      refused.records++;
      refused.tokens += tokensIn(e);
      refused.costMicros += Math.min(Number(e.costMicros) || 0, USAGE_LIMITS.costMicros);
      refused.reasons.set(reason, (refused.reasons.get(reason) ?? 0) + 1);
    };
    const minute = Math.floor(Date.now() / 60_000);
    let skipped = 0;
    const push = (e: Record<string, unknown>) => {
      const id = e.id as string;
      if (this.seen.has(id) || inRequest.has(id)) return void skipped++;
      const session = e.session as string;
      // Shared mode: a record books only to a session some hook or the floor has seen, never to one made up.
      if (reporter && !this.known(session, floor)) return refuse('unknown session', e);
      // A session some person's hooks reported takes usage from that person's tokens only.
      const owner = this.identities.get(session)?.uid;
      if (reporter && owner && owner !== principal!.uid) return refuse("another person's session", e);
      const tokens = tokensIn(e);
      const cost = Number(e.costMicros) || 0;
      const bad = e.model === '' ? null : implausibleRecord(e as { input: number; output: number; cacheRead: number; cacheWrite: number }, cost);
      if (bad) return refuse(bad, e);
      let m = this.perMinute.get(session);
      if (!m || m.minute !== minute) this.perMinute.set(session, (m = { minute, tokens: 0, costMicros: 0 }));
      if (m.tokens + tokens > PLAUSIBLE.sessionTokensPerMinute) return refuse('session tokens per minute', e);
      if (m.costMicros + cost > PLAUSIBLE.sessionCostMicrosPerMinute) return refuse('session cost per minute', e);
      m.tokens += tokens;
      m.costMicros += cost;
      inRequest.add(id);
      if (reporter) e.reporter = reporter;
      events.push(e);
    };
    const otlpFor = (e: Record<string, unknown>) => {
      const via = this.sessionVia.get(e.session as string);
      if (via && via !== 'otlp') skipped++;
      else push(e);
    };
    for (const r of usage) otlpFor(this.usageEvent(r, this.resolve(r.tool, r.sessionId, r.subagentType, floor, r.ts)));
    for (const d of decisions) otlpFor(this.decisionEvent(d, this.resolve(d.tool, d.sessionId, d.subagentType, floor, d.ts)));
    if (refused.records) {
      // One event per request whatever it refused: what a flood costs the log is bounded by the request budget.
      const body = { type: 'usage.refused', records: refused.records, tokens: refused.tokens, costMicros: refused.costMicros, reasons: Object.fromEntries(refused.reasons), reporter: reporter || undefined, ts: Date.now() };
      events.push(body);
    }
    if (events.length) {
      const r = await this.store.append(this.stream, events.map((e) => ({ type: e.type as string, body: JSON.stringify(e) })));
      await this.host.folded(r.last);
      await this.notifyBudget();
    }
    return { accepted: events.length - (refused.records ? 1 : 0), skipped, refused: refused.records };
  }

  /**
   * Usage from a source other than OTLP, into the same stream and fold: the
   * hook point for the flock's provider usage and the bridge's results. A
   * key already counted is skipped; so is a session whose usage already
   * comes from another source (see sessionVia). `lazy` (AppendOptions.lazy):
   * for usage as durable as the step that reports it (the flock's calls).
   */
  async record(reports: readonly DirectUsage[], opts: { lazy?: boolean } = {}): Promise<{ accepted: number; skipped: number }> {
    const events: Record<string, unknown>[] = [];
    // Keys of this call so far: a transcript's messages can be many thousands, so no scan of `events` per report.
    const inCall = new Set<string>();
    let skipped = 0;
    for (const r of reports) {
      const id = `${r.via}:${r.key}`.slice(0, USAGE_LIMITS.id);
      const via = this.sessionVia.get(r.session);
      if (this.seen.has(id) || (via && via !== r.via) || inCall.has(id)) {
        skipped++;
        continue;
      }
      inCall.add(id);
      const c = costOf(r.model, r, r.vendorUsd, this.state.prices);
      const ts = r.ts > 0 ? r.ts : Date.now();
      events.push({
        type: 'usage',
        id,
        via: r.via,
        agent: r.agent,
        parent: r.parent ?? undefined,
        session: r.session,
        team: r.team,
        source: r.source,
        model: r.model,
        day: dayOf(ts),
        input: r.input,
        output: r.output,
        cacheRead: r.cacheRead,
        cacheWrite: r.cacheWrite,
        costMicros: c.costMicros,
        costFrom: c.costFrom,
        ...(r.requests !== undefined ? { requests: r.requests } : {}),
        ts,
      });
    }
    if (events.length) {
      const a = await this.store.append(this.stream, events.map((e) => ({ type: 'usage', body: JSON.stringify(e) })), { lazy: opts.lazy === true });
      await this.host.folded(a.last);
      await this.notifyBudget();
    }
    return { accepted: events.length, skipped };
  }

  /**
   * A bridge's `session.result` usage (src/core/fleet-wire.ts, ResultUsage):
   * what Claude Code session `claude` used for one prompt, per model, with
   * its own cost. `key` is unique per result (the post's Idempotency-Key, or
   * its stream position), so a retried post counts once. The agent is the
   * session's as the hooks name it (`claude-code:<id>`): with the hooks and
   * telemetry on too, the one-source rule keeps either OTLP or the bridge,
   * whichever came first. The team is the hooks' for that session, else
   * `fallbackTeam`.
   */
  recordBridge(key: string, u: ResultUsage, fallbackTeam: string, ts: number): Promise<{ accepted: number; skipped: number }> {
    const agent = sessionAgentId(u.claude, 'claude-code');
    const team = this.state.agents.get(agent)?.team ?? this.identities.get(agent)?.team ?? fallbackTeam;
    const base = createHash('sha256').update(key).digest('hex').slice(0, 32);
    return this.record(
      u.models.map((m) => ({ key: `${base}:${m.model}`, via: 'bridge' as const, agent, session: agent, team, source: 'claude-code', model: m.model, input: m.input, output: m.output, cacheRead: m.cacheRead, cacheWrite: m.cacheWrite, vendorUsd: m.costUsd, ts })),
    );
  }

  /**
   * A Claude Code Stop or SubagentStop named a transcript: read it after the
   * grace period and count its messages for `who`, unless the session's usage
   * comes from OTLP. Only a `.jsonl` regular file on this machine is read
   * (a server in shared mode usually has none: the hooks' machine has it).
   */
  readTranscriptLater(path: string, who: { agent: string; session: string; parent: string | null; team: string }): void {
    if (!isAbsolute(path) || !path.endsWith('.jsonl') || path.length > 4096) return;
    if (this.sessionVia.get(who.session) === 'otlp') return;
    clearTimeout(this.timers.get(path));
    const t = setTimeout(() => {
      this.timers.delete(path);
      this.readTranscript(path, who).catch((e) => console.error('roost: a transcript could not be counted', e));
    }, this.transcriptGraceMs);
    t.unref();
    this.timers.set(path, t);
  }

  /** Reads a transcript now (readTranscriptLater's step, and tests'). */
  async readTranscript(path: string, who: { agent: string; session: string; parent: string | null; team: string }): Promise<{ accepted: number; skipped: number }> {
    if (this.sessionVia.get(who.session) === 'otlp') return { accepted: 0, skipped: 0 };
    let text: string;
    try {
      const st = await stat(path);
      if (!st.isFile() || st.size > TRANSCRIPT_MAX_BYTES) return { accepted: 0, skipped: 0 };
      text = await readFile(path, 'utf8');
    } catch {
      return { accepted: 0, skipped: 0 };
    }
    // A subagent's own file marks every line a sidechain; the session's file marks only a subagent's lines so.
    const reqs = transcriptUsage(text, { sidechain: who.parent !== null });
    return this.record(
      reqs.map((q) => ({ key: `claude-code:${q.id}`, via: 'transcript' as const, agent: who.agent, parent: who.parent, session: who.session, team: who.team, source: 'claude-code', model: q.model, input: q.input, output: q.output, cacheRead: q.cacheRead, cacheWrite: q.cacheWrite, ts: q.ts })),
    );
  }

  override async stop(): Promise<void> {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await super.stop();
  }

  /**
   * Writes the budget crossings now due, each once (the key names the budget,
   * its version, its day and the threshold); a 100% crossing and its pause
   * are one append.
   */
  private async notifyBudget(): Promise<void> {
    const due = dueCrossings(this.state);
    for (const c of due) {
      const b = c.budget;
      // Past 100% at once: the one crossing is 100 (it implies 80: one notice, one append).
      if (c.threshold === 80 && due.some((d) => d.budget === b && d.threshold === 100)) continue;
      const ts = Date.now();
      const crossed = { type: 'budget.crossed', budget: b.key, threshold: c.threshold, version: b.version, ...(b.period === 'day' ? { day: b.day } : {}), spent: c.spent, limit: b.limit, unit: b.unit, costMicros: b.unit === 'usd' ? c.spent : undefined, limitMicros: b.unit === 'usd' ? b.limit : undefined, ts };
      const events: Record<string, unknown>[] = [crossed];
      if (c.threshold === 100) events.push({ type: 'budget.paused', budget: b.key, version: b.version, ...(b.period === 'day' ? { day: b.day } : {}), reason: budgetReason(this.state, b, this.project), ts });
      const r = await this.store.append(
        this.stream,
        events.map((e) => ({ type: e.type as string, body: JSON.stringify(e) })),
        { idempotencyKey: `budget:${b.key}:${b.setAt}:${b.version}:${b.day}:${c.threshold}` },
      );
      await this.host.folded(r.last);
    }
  }

  /** The project's total budget in USD (0 clears it): the legacy form of setBudgetOf. */
  setBudget(usd: number, by: string): Promise<Budget | null> {
    return this.setBudgetOf({ scope: 'project', target: '', period: 'total', unit: 'usd', limit: Math.round(usd * 1_000_000) }, by);
  }

  /**
   * Sets (0: removes) one budget; a set that ends a pause writes its
   * `budget.lifted` in the same append. Throws 409 past USAGE_LIMITS.budgets.
   */
  async setBudgetOf(b: { scope: BudgetScope; target: string; period: BudgetPeriod; unit: BudgetUnit; limit: number; tz?: string }, by: string): Promise<Budget | null> {
    const key = budgetKey(b.scope, b.target, b.period);
    const old = this.state.budgets.get(key);
    if (!old && b.limit > 0 && this.state.budgets.size >= USAGE_LIMITS.budgets) throw new HttpError(409, 'conflict', `a project has at most ${USAGE_LIMITS.budgets} budgets; remove one first`);
    const ts = Date.now();
    const events: Record<string, unknown>[] = [{ type: 'budget.set', scope: b.scope, target: b.target, period: b.period, unit: b.unit, limit: b.limit, ...(b.unit === 'usd' && b.scope === 'project' && b.period === 'total' ? { limitMicros: b.limit } : {}), ...(b.period === 'day' ? { tz: b.tz || 'UTC' } : {}), by, ts }];
    if (old && budgetPausedNow(this.state, old, ts)) events.unshift({ type: 'budget.lifted', budget: key, by, why: b.limit > 0 ? 'raised' : 'removed', ts });
    const r = await this.store.append(this.stream, events.map((e) => ({ type: e.type as string, body: JSON.stringify(e) })));
    await this.host.folded(r.last);
    await this.notifyBudget();
    return this.state.budgets.get(key) ?? null;
  }

  /** Ends a budget's pause without changing its limit (it stays spent for this version and day, and does not pause again until then). */
  async liftBudget(key: string, by: string): Promise<Budget> {
    const b = this.state.budgets.get(key);
    if (!b) throw new HttpError(404, 'not_found', `no budget "${key.slice(0, 200)}"`);
    if (!budgetPausedNow(this.state, b, Date.now())) return b;
    const body = { type: 'budget.lifted', budget: key, by, why: 'lifted', ts: Date.now() };
    const r = await this.store.append(this.stream, [{ type: body.type, body: JSON.stringify(body) }], { idempotencyKey: `budget-lift:${key}:${b.setAt}:${b.version}:${b.day}` });
    await this.host.folded(r.last);
    return this.state.budgets.get(key) ?? b;
  }

  /**
   * Why an agent may take no next step, or null: the reason the model reads
   * ("budget for team X reached: 25.00 $ of 25.00 $ today"). `session`: its
   * session agent; `teams`: the team names it goes by (the hook's, and the
   * one its usage is booked to).
   */
  pauseReason(who: { session?: string; teams?: string[] }, now = Date.now()): string | null {
    if (!this.state.budgets.size) return null;
    const teams = [...(who.teams ?? [])];
    const known = who.session ? this.state.agents.get(who.session)?.team : undefined;
    if (known && !teams.includes(known)) teams.push(known);
    const b = pausedFor(this.state, { session: who.session, teams }, now);
    return b ? budgetReason(this.state, b, this.project, now) : null;
  }

  /** Why the project takes no new step at all (a paused project budget), or null. */
  projectPauseReason(now = Date.now()): string | null {
    if (!this.state.budgets.size) return null;
    // Only project-wide budgets cover a caller with no session and no team.
    const b = pausedFor(this.state, {}, now);
    return b ? budgetReason(this.state, b, this.project, now) : null;
  }

  /** The budgets as the page shows them: each with what it has spent now and whether it is paused. */
  budgetsView(now = Date.now()): (Budget & { spent: number; pausedNow: boolean; today: string })[] {
    return [...this.state.budgets.values()].map((b) => ({ ...b, spent: budgetSpent(this.state, b, now), pausedNow: budgetPausedNow(this.state, b, now), today: b.period === 'day' ? dayIn(now, b.tz) : '' }));
  }

  /** The project's own price for a model (null removes it): an event, so every node prices the same from then on. */
  async setPrice(model: string, price: { input: number; output: number; cacheRead: number; cacheWrite: number } | null, by: string): Promise<void> {
    const body = { type: 'prices.set', model: modelName(model), price, by, ts: Date.now() };
    const r = await this.store.append(this.stream, [{ type: body.type, body: JSON.stringify(body) }]);
    await this.host.folded(r.last);
  }

  getUsage = (res: ServerResponse): void => {
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        protocol: USAGE_PROTOCOL_VERSION,
        epoch: this.store.epoch,
        position: this.pos,
        reset: false,
        // Which table prices what the project has no price of its own for.
        priceTable: { date: PRICE_TABLE.date, source: PRICE_TABLE.source },
        state: usageToJSON(this.state),
      }),
    );
  };
}

/** A usage event's tokens (all four kinds). */
function tokensIn(e: Record<string, unknown>): number {
  return (Number(e.input) || 0) + (Number(e.output) || 0) + (Number(e.cacheRead) || 0) + (Number(e.cacheWrite) || 0);
}

const Budget = Type.Object({ usd: Type.Number({ minimum: 0, maximum: USAGE_LIMITS.budgetMicros / 1_000_000 }) });

/** One budget: `usd` or `tokens` (0 removes it); a day budget may name its time zone (IANA). */
const SetBudget = Type.Object(
  {
    scope: Type.Union([Type.Literal('project'), Type.Literal('team'), Type.Literal('agent')]),
    target: Type.Optional(Type.String({ maxLength: USAGE_LIMITS.agent })),
    period: Type.Optional(Type.Union([Type.Literal('total'), Type.Literal('day')])),
    usd: Type.Optional(Type.Number({ minimum: 0, maximum: USAGE_LIMITS.budgetMicros / 1_000_000 })),
    tokens: Type.Optional(Type.Integer({ minimum: 0, maximum: USAGE_LIMITS.budgetTokens })),
    tz: Type.Optional(Type.String({ minLength: 1, maxLength: USAGE_LIMITS.tz })),
  },
  { additionalProperties: false },
);
const LiftBudget = Type.Object({ budget: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

/** USD per million tokens: a price row's figure. */
const PerMillion = Type.Number({ minimum: 0, maximum: 10_000 });
const SetPrice = Type.Object({
  model: Type.String({ minLength: 1, maxLength: USAGE_LIMITS.model }),
  price: Type.Union([Type.Object({ input: PerMillion, output: PerMillion, cacheRead: PerMillion, cacheWrite: PerMillion }, { additionalProperties: false }), Type.Null()]),
});

/** The answer an OTLP exporter expects: an empty Export*ServiceResponse in the request's encoding. */
function otlpOk(res: ServerResponse, enc: OtlpEncoding): void {
  if (enc === 'json') return sendJson(res, 200, {});
  res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 });
  res.end();
}

export function usageRoutes(of: PerProject<UsageService>, floors: PerProject<FloorService>, live: Live): Route[] {
  const otlp = (kind: 'logs' | 'metrics') =>
    route({
      method: 'POST',
      path: `/v1/${kind}`,
      auth: 'editor',
      body: 'raw',
      doc: `OTLP/HTTP ${kind}, JSON or protobuf (a token, normally)`,
      handler: async ({ req, res, principal }) => {
        const enc = encodingOf(req.headers['content-type']);
        const body = inflate(await readBody(req, OTLP_MAX_BYTES), req.headers['content-encoding']);
        const svc = await of.of(req);
        if (kind === 'logs') await svc.ingestLogs(body, enc, (await floors.of(req)).state, principal);
        else svc.metricPoints += decodeMetrics(body, enc).filter((p) => toolOfService(p.service) !== null).length;
        otlpOk(res, enc);
      },
    });
  return [
    otlp('logs'),
    otlp('metrics'),
    route({ method: 'GET', path: '/usage', auth: 'viewer', handler: async ({ req, res }) => (await of.of(req)).getUsage(res) }),
    route({ method: 'GET', path: '/usage/stream', auth: 'viewer', stream: true, handler: async ({ req, res, url, grant }) => void (await live.serve(req, res, url, grant!, [`usage:${grant!.project}`])) }),
    route({
      method: 'PUT',
      path: '/usage/prices',
      auth: 'owner',
      body: SetPrice,
      doc: "the project's own price of a model in USD per million tokens (null removes it); it prices the records booked after it",
      handler: async ({ req, res, body, principal }) => {
        const svc = await of.of(req);
        if (!modelName(body.model)) throw new HttpError(400, 'bad_request', 'model: a model name, such as claude-sonnet-4-5');
        await svc.setPrice(body.model, body.price, principal?.name ?? 'local owner');
        sendJson(res, 200, { prices: [...svc.state.prices] });
      },
    }),
    route({
      method: 'PUT',
      path: '/usage/budget',
      auth: 'owner',
      body: Budget,
      doc: 'the project budget in USD (0 clears it)',
      handler: async ({ req, res, body, principal }) => {
        const svc = await of.of(req);
        await svc.setBudget(body.usd, principal?.name ?? 'local owner');
        sendJson(res, 200, { budget: svc.state.budget, project: svc.state.project });
      },
    }),
    route({ method: 'GET', path: '/usage/budgets', auth: 'viewer', doc: "the project's budgets, each with its spend now and whether it is paused", handler: async ({ req, res }) => sendJson(res, 200, { budgets: (await of.of(req)).budgetsView() }) }),
    route({
      method: 'PUT',
      path: '/usage/budgets',
      auth: 'owner',
      body: SetBudget,
      doc: `one budget: scope project, team or agent (target: the team's name or the session agent's id), period total or day (tz: a time zone, UTC by default), in usd or tokens (0 removes it); at most ${USAGE_LIMITS.budgets} per project; a raise ends a pause at once`,
      handler: async ({ req, res, body, principal }) => {
        const svc = await of.of(req);
        const target = body.scope === 'project' ? '' : (body.target ?? '').trim().slice(0, body.scope === 'team' ? USAGE_LIMITS.team : USAGE_LIMITS.agent);
        if (body.scope !== 'project' && !target) throw new HttpError(400, 'bad_request', `target: the ${body.scope === 'team' ? "team's name" : "session agent's id"} is required`);
        if ((body.usd === undefined) === (body.tokens === undefined)) throw new HttpError(400, 'bad_request', 'give the limit as one of usd or tokens');
        const period = body.period ?? 'total';
        if (body.tz !== undefined && (period !== 'day' || !validTimeZone(body.tz))) throw new HttpError(400, 'bad_request', 'tz: a time zone name (such as Europe/Paris) for a day budget');
        const unit = body.usd !== undefined ? 'usd' : 'tokens';
        const limit = unit === 'usd' ? Math.round(body.usd! * 1_000_000) : body.tokens!;
        const b = await svc.setBudgetOf({ scope: body.scope, target, period, unit, limit, tz: body.tz }, principal?.name ?? 'local owner');
        sendJson(res, 200, { budget: b, budgets: svc.budgetsView() });
      },
    }),
    route({
      method: 'POST',
      path: '/usage/budgets/lift',
      auth: 'owner',
      body: LiftBudget,
      doc: "ends a budget's pause without changing its limit (it does not pause again for that version and day)",
      handler: async ({ req, res, body, principal }) => {
        const svc = await of.of(req);
        await svc.liftBudget(body.budget, principal?.name ?? 'local owner');
        sendJson(res, 200, { budgets: svc.budgetsView() });
      },
    }),
  ];
}

