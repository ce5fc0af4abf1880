// Verdicts: each pending verdict is an approval of kind `verdict` in the one
// approvals model; its close is appended as the verdict (keyed, so once);
// the trust changes the fold computed are announced; an owner demotes.

import { type VerdictTarget, type FlockList, type FlockItem, itemPhase, type VerdictValue, flockTs, previewTrust, trustChangedEvent, unannouncedTrust, trustLevel } from '../../core/flock.js';
import type { Approval } from '../../core/approvals.js';
import { HttpError } from '../http.js';
import { type Obj, verdictApprovalId } from './settings.js';
import { FlockNests } from './nest-posts.js';

export abstract class FlockVerdicts extends FlockNests {

  // ------------------------------------------------------------ verdicts

  /** The pending verdict of an item's target, when one waits for a person. */
  pendingVerdict(item_id: string, target: VerdictTarget): { list: FlockList; item: FlockItem } | null {
    const m = /^(.+)-([1-9][0-9]{0,2})$/.exec(item_id);
    if (!m) return null;
    const list = this.state.lists.get(m[1]);
    const item = list?.items[Number(m[2]) - 1];
    if (!list || list.finished || !item || item.item_id !== item_id) return null;
    const phase = itemPhase(item);
    if (target === 'triage' && phase === 'triage_verdict' && item.triage?.needs_approval) return { list, item };
    if (target === 'output' && phase === 'output_verdict' && item.answer?.needs_approval) return { list, item };
    return null;
  }

  /** Asks for the approval of a pending verdict (once; the id is stable); appends the verdict when it closed already. */
  async ensureApproval(list: FlockList, item: FlockItem, target: VerdictTarget): Promise<Approval | null> {
    const approvals = await this.opts.approvals();
    const id = verdictApprovalId(this.opts.project, item.item_id, target);
    const known = approvals.state.byId.get(id);
    if (known) {
      if (known.status !== 'pending') await this.approvalClosed(known);
      return known;
    }
    if (approvals.state.forgotten.has(id)) {
      // Closed long ago and its verdict never written: fail safe.
      await this.writeVerdict(list.list_id, item.item_id, target, 'timeout', '');
      return null;
    }
    let p = this.asking.get(id);
    if (!p) {
      const asker = target === 'triage' ? 'Sentry' : (item.answer?.crows[0] ?? 'flock');
      const digest =
        target === 'triage'
          ? `${item.text}\n→ ${item.triage?.mode} ${item.triage?.task_type}: ${item.triage?.reason ?? ''}${item.triage?.subtasks.length ? `\n${item.triage.subtasks.map((s, i) => `${i + 1}. ${s}`).join('\n')}` : ''}`
          : `${item.text}\n→ ${(item.answer?.crows ?? []).join(', ')}: ${item.answer?.text ?? ''}`;
      p = approvals
        .request({
          id,
          kind: 'verdict',
          asker,
          askerName: asker,
          scope: { list: list.list_id, item: item.item_id, target },
          source: 'flock',
          tool: target,
          input: digest.slice(0, 2000),
          window: this.settings.verdictWindowMs,
        })
        .then((r) => r.approval)
        .finally(() => this.asking.delete(id));
      this.asking.set(id, p);
    }
    return p;
  }

  /** An approval closed: a verdict approval's close is the verdict (first decision wins; expired or withdrawn is `timeout`). */
  protected async approvalClosed(a: Approval): Promise<void> {
    if (a.kind !== 'verdict' || a.source !== 'flock') return;
    const { list, item, target } = a.scope as { list?: string; item?: string; target?: string };
    if (!list || !item || (target !== 'triage' && target !== 'output')) return;
    if (a.id !== verdictApprovalId(this.opts.project, item, target)) return;
    const verdict: VerdictValue = a.status === 'allowed' ? 'approved' : a.status === 'denied' ? 'rejected' : 'timeout';
    await this.writeVerdict(list, item, target, verdict, verdict === 'timeout' ? '' : a.decidedBy);
  }

  /** Appends a verdict and the trust changes it announces, in one append (keyed: once per target). */
  async writeVerdict(list_id: string, item_id: string, target: VerdictTarget, verdict: VerdictValue, by: string): Promise<void> {
    const ts = flockTs(Date.now());
    const ev: Obj = { type: 'verdict', list_id, item_id, target, verdict, ts, ...(by ? { by } : {}) };
    const ann = previewTrust(this.state, ev).map((c) => trustChangedEvent(c, ts));
    await this.append([ev, ...ann], `verdict:${item_id}:${target}`);
  }

  /**
   * Every level change is announced on the stream of the list whose verdict
   * caused it (spec: `trust.changed`). A verdict's own append carries the
   * announcements its preview saw, but a preview made while another verdict
   * was on its way (decisions at once: a burst in the inbox, two nodes) sees
   * an older ledger and misses a change. So after a verdict is folded, the
   * driver announces whatever the fold computed and no announcement names
   * yet (keyed, so once; a second announcement of a change is refused by the
   * fold and never reaches a stream).
   */
  protected async announceTrust(): Promise<void> {
    if (!this.driving) return;
    const due = unannouncedTrust(this.state);
    if (due.length === 0) return;
    const ts = flockTs(Date.now());
    await this.append(
      due.map((c) => trustChangedEvent(c, ts)),
      `trust.announce:${due[0].id}-${due[due.length - 1].id}`,
    );
  }

  // ------------------------------------------------------------ owner actions

  /** An owner demotes (one level down) or resets (to stranger) a holder, with a reason. */
  async demote(holder: string, task_type: string, action: 'demote' | 'reset', by: string, reason: string): Promise<{ from: number; to: number }> {
    const from = trustLevel(this.state, holder, task_type);
    if (from === 0) throw new HttpError(409, 'conflict', `${holder} is already a stranger at ${task_type}`);
    const to = action === 'reset' ? 0 : from - 1;
    const before = this.state.changes;
    await this.append([{ type: 'trust.changed', list_id: '', holder, task_type, from, to, by, reason, ts: flockTs(Date.now()) }]);
    if (this.state.changes === before) throw new HttpError(409, 'conflict', 'the ledger changed meanwhile; read it and try again');
    return { from, to };
  }
}
