import { useEffect, useState } from 'preact/hooks';
import type { Execution, PendingApproval } from '../../../../src/core/work.js';
import { decideFleet } from '../../shared/approvals/api.js';
import { boardRequest, type BoardRequest } from '../api.js';

/**
 * The approval a blocked execution waits for: a fleet board request (the
 * bridge posted it pending on its thread), which is an approval of kind
 * `fleet` in the one approvals model. Allow / Deny here goes through the one
 * decide endpoint (`decideFleet` finds the approval by its board scope, as the
 * board's card does; the inbox lists it by id), so the first decision anywhere
 * wins, the server checks the role and records the decider. Nothing changes here until the bridge reports the execution
 * resumed: the box goes away for everyone at once. Viewers see it read-only.
 *
 * What it shows is the request as the board holds it, read from the board:
 * the server checked the pointer against the board when it took the report,
 * but a pointer stored before that check was the Space's word. Whoever may
 * decide can read the board, so the buttons appear only beside the board's
 * own tool and digest, and only while the board has it pending. Someone who
 * cannot read the board sees the pointer (read-only anyway).
 */
export function ApprovalBox({ x, approval: a, role, projectName }: { x: Execution; approval: PendingApproval; role: string | null; projectName: string }) {
  const [sent, setSent] = useState<string | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const [held, setHeld] = useState<{ rid: string; req: BoardRequest } | null>(null);
  useEffect(() => {
    let live = true;
    void boardRequest(a).then((req) => live && setHeld({ rid: a.rid, req }));
    return () => {
      live = false;
    };
  }, [a.project, a.thread, a.session, a.rid]);
  const req = held?.rid === a.rid ? held.req : null;
  // Before the board answers there is nothing to show a decider; after, the board's copy or, for whoever cannot read the board, the pointer.
  const ask = req?.kind === 'held' ? req : req?.kind === 'unreadable' ? a : null;
  const pending = req?.kind === 'held' && req.state === 'pending';
  const canDecide = (role === 'owner' || role === 'editor') && pending;
  const answer = async (allow: boolean) => {
    setSent(a.rid);
    setErr(null);
    const r = await decideFleet(a.thread, a.session, a.rid, allow, a.project);
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
        <p class="ask" data-source={req?.kind === 'held' ? 'board' : 'pointer'}>
          <code class="tool" data-testid="approval-tool">
            {ask.tool}
          </code>{' '}
          <span class="digest" data-testid="approval-digest">
            {ask.digest}
          </span>
        </p>
      ) : (
        <p class="ask muted" data-testid="approval-loading">
          {req?.kind === 'gone' ? `The fleet board #${a.thread} does not hold this request (any more): nothing to decide here.` : 'Reading the request from the fleet board…'}
        </p>
      )}
      {req?.kind === 'held' && req.state !== 'pending' && (
        <p class="small" data-testid="approval-settled">
          Already {req.state}
          {req.by ? ` by ${req.by}` : ''} on the board; the agent goes on once its bridge hears it.
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
      ) : role === 'owner' || role === 'editor' ? (
        req?.kind === 'unreadable' && (
          <p class="small" data-testid="approval-unreadable">
            The fleet board cannot be read now{req.status ? ` (${req.status})` : ''}: decide on the board #{a.thread}.
          </p>
        )
      ) : (
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
