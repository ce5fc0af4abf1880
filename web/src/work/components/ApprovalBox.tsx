import { useState } from 'preact/hooks';
import type { Execution, PendingApproval } from '../../../../src/core/work.js';
import { fleetApprovalOf } from '../../../../src/core/fleet-approvals.js';
import { useApprovals } from '../../live/approvals.js';
import { decideFleet } from '../../shared/approvals/api.js';

/**
 * The approval a blocked execution waits for: a fleet board request (the
 * bridge posted it pending on its thread), which is an approval of kind
 * `fleet` in the one approvals model. Allow / Deny here goes through the one
 * decide endpoint (found by its board scope in the project's approvals, as
 * the board's card finds it; the inbox lists it by id), so the first decision
 * anywhere wins, the server checks the role and records the decider. Nothing
 * changes here until the bridge reports the execution resumed: the box goes
 * away for everyone at once. Viewers see it read-only.
 *
 * What it shows is the request as the server holds it, read from the
 * project's one approvals fold on the live connection (the server asked it
 * from the board's own request, its tool and digest): the server checked the
 * pointer against the board when it took the report, but a pointer stored
 * before that check was the Space's word. Whoever may decide can read the
 * approvals, so the buttons appear only beside the server's own tool and
 * digest, and only while the request is pending. Someone who is no member of
 * the pointer's project sees the pointer (read-only anyway).
 */
export function ApprovalBox({ x, approval: a, role, projectName }: { x: Execution; approval: PendingApproval; role: string | null; projectName: string }) {
  const [sent, setSent] = useState<string | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const approvals = useApprovals(a.project || 'default');
  const one = approvals.ready ? fleetApprovalOf(approvals.state, a.thread, a.session, a.rid) : undefined;
  const member = role === 'owner' || role === 'editor' || role === 'viewer';
  // Before the approvals' first snapshot there is nothing to show a member; a non-member (who cannot read them) sees the pointer.
  const ask = one ? { tool: one.tool, digest: one.input } : member ? null : a;
  const pending = one?.status === 'pending';
  const canDecide = (role === 'owner' || role === 'editor') && pending;
  const answer = async (allow: boolean) => {
    setSent(a.rid);
    setErr(null);
    const r = await decideFleet(a.thread, a.session, a.rid, allow, one, a.project);
    if (!r.ok) {
      setErr(r.message);
      setSent(null);
    }
  };
  const busy = sent === a.rid;
  return (
    <section class="work-approval" data-testid="work-approval" data-rid={a.rid} data-execution={x.id} aria-label="Needs approval">
      <h3>Needs approval</h3>
      {ask ? (
        <p class="ask" data-source={one ? 'approvals' : 'pointer'}>
          <code class="tool" data-testid="approval-tool">
            {ask.tool}
          </code>{' '}
          <span class="digest" data-testid="approval-digest">
            {ask.digest}
          </span>
        </p>
      ) : (
        <p class="ask muted" data-testid="approval-loading">
          {approvals.ready ? `The approvals of ${projectName} do not hold this request (any more): nothing to decide here.` : 'Reading the request…'}
        </p>
      )}
      {one && one.status !== 'pending' && (
        <p class="small" data-testid="approval-settled">
          Already {one.status}
          {one.decidedBy ? ` by ${one.decidedBy}` : ''}; the agent goes on once its bridge hears it.
        </p>
      )}
      <p class="muted small" data-testid="approval-who">
        Editors and owners of {projectName} decide, here or on the fleet board #{a.thread}; the first decision wins, and no decision in time is a no.
      </p>
      {canDecide ? (
        <div class="answer">
          <button class="allow" data-testid="approval-allow" disabled={busy} onClick={() => void answer(true)} aria-label={`Allow ${ask?.tool ?? ''}`}>
            Allow
          </button>
          <button class="deny" data-testid="approval-deny" disabled={busy} onClick={() => void answer(false)} aria-label={`Deny ${ask?.tool ?? ''}`}>
            Deny
          </button>
        </div>
      ) : role === 'owner' || role === 'editor' ? null : (
        <p class="small" data-testid="approval-readonly">
          {role === 'viewer' ? `You are a viewer of ${projectName}: you can see this request, not decide it.` : `You are not a member of ${projectName}: you cannot decide this request.`}
        </p>
      )}
      {err && (
        <p class="error" role="alert" data-testid="approval-error">
          {err}
        </p>
      )}
    </section>
  );
}
