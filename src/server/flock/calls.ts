// Model calls: the provider per role, a call with its usage recorded in
// batches, and a code flight run by a coding agent on a fleet board.

import type { ModelRole } from '../../models/config.js';
import type { ModelProvider, ModelRequest, ModelOutcome } from '../../models/index.js';
import { nestTeam, crowAgentId } from './floor.js';
import { providerUsage, type DirectUsage } from '../usage.js';
import type { FlockItem } from '../../core/flock.js';
import type { BoardRef } from './agents.js';
import { codePrompt } from './prompts.js';
import { USAGE_BATCH, USAGE_MS } from './settings.js';
import { FlockLease } from './lease.js';
import { budgetGate } from './budget-gate.js';

export abstract class FlockCalls extends FlockLease {

  protected provider(role: ModelRole): ModelProvider | null {
    return this.settings.models?.forRole(role) ?? this.settings.models?.forRole('crow') ?? null;
  }

  /**
   * One model call for `crow` on a list: the one place a call's provider
   * usage is read, so it is recorded on the project's usage here (agent the
   * crow, team the list's nest), a failed call's tokens too. Recording never
   * holds up or fails the flight.
   */
  async call(role: ModelRole, req: ModelRequest, who: { crow: string; list_id?: string; nest_id?: string; item_id: string }): Promise<ModelOutcome> {
    const p = this.provider(role);
    // A spent project budget: the flock flies nothing more (budget-gate.ts).
    const gated = await budgetGate(this.opts.usage);
    if (gated) return gated;
    const n = ++this.stats.calls;
    if (!p) return { ok: false, error: { kind: 'bad_request', message: `no model serves the ${role} role`, retryable: false }, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0, estimated: false }, model: '' };
    const out = await p.call({ ...req, timeoutMs: this.settings.callTimeoutMs });
    if (!out.ok) this.stats.failedCalls++;
    const u = out.usage;
    if (this.opts.usage && u.input + u.output + u.cacheRead + u.cacheWrite > 0) {
      // The crow's floor agent and its nest's room (src/server/flock/floor.ts): usage lands on the tile the floor shows.
      const team = nestTeam(this.state, who.nest_id ?? this.state.lists.get(who.list_id ?? '')?.nest_id ?? 'todo').name;
      // Unique per call: a call redone after a restart is another request, and is counted.
      const key = `${who.item_id}:${role}:${who.crow}:${this.callKey}:${n}`;
      this.usageLater(providerUsage({ key, agent: crowAgentId(who.crow), team, model: out.model || p.model, usage: u, ts: Date.now() }));
    }
    return out;
  }

  protected usageLater(r: DirectUsage): void {
    this.usageQueue.push(r);
    if (this.usageQueue.length >= USAGE_BATCH) void this.flushUsage();
    else if (!this.usageTimer) {
      this.usageTimer = setTimeout(() => void this.flushUsage(), USAGE_MS);
      this.usageTimer.unref();
    }
  }

  protected async flushUsage(): Promise<void> {
    if (this.usageTimer) clearTimeout(this.usageTimer);
    this.usageTimer = null;
    const records = this.usageQueue;
    this.usageQueue = [];
    if (records.length === 0 || !this.opts.usage) return;
    try {
      await (await this.opts.usage()).record(records, { lazy: true });
    } catch (e) {
      console.error('roost: flock usage not recorded', e);
    }
  }

  /**
   * A code flight's run: the coding agent's session at `board` instead of a
   * model call (its usage is counted on the project's usage by the board, as
   * any board session's: not here). Undefined without a board.
   */
  protected agentRun(item: FlockItem, crow: string, subtask: number, board: BoardRef | null | undefined): (() => Promise<ModelOutcome>) | undefined {
    const agents = this.opts.agents;
    if (!board || !agents) return undefined;
    return () => agents.fly(board, { name: `${crow} · ${item.item_id}`, prompt: codePrompt(this.state, item, crow, subtask) });
  }

  /** The board a work flight of a code item was sent to (its `crow.flying`), or null: a model crow's. */
  protected flightBoard(list_id: string, item_id: string, crow: string): BoardRef | null {
    const parse = (data: string) => JSON.parse(data) as { item_id?: unknown; crow?: unknown; board?: Partial<BoardRef> };
    const ev = this.listFrames.get(list_id)?.findLast('crow.flying', (data) => {
      const f = parse(data);
      return f.item_id === item_id && f.crow === crow;
    });
    if (!ev) return null;
    const b = parse(ev.data);
    return typeof b.board?.thread === 'string' && typeof b.board.session === 'string' ? { thread: b.board.thread, session: b.board.session } : null;
  }
}
