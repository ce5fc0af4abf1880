// "Allowed by trust" on a tool call the one trust ledger allowed at once
// (docs/approvals.md "Earned trust"): who earned it, and a Revoke that drops
// the team a level at that action class (the next such call waits).
import { useState } from 'preact/hooks';
import { recentApprovals, type Approval } from '../../../../src/core/approvals.js';
import { useApprovals } from '../../live/approvals.js';
import { postJson } from '../api.js';
import { inProject, pageProject } from '../scope.js';

export function TrustLine(props: { a: Approval; project?: string }) {
  const { a } = props;
  // '' (not yet), 'busy', 'done', or the refusal's message.
  const [state, setState] = useState('');
  if (!a.trust) return null;
  const people = [...new Set(a.trust.because.map((b) => b.by).filter((b): b is string => !!b))];
  const revoke = async () => {
    setState('busy');
    const r = await postJson(inProject(`/approvals/${encodeURIComponent(a.id)}/revoke`, props.project), {});
    setState(r.ok ? 'done' : r.message || 'could not revoke');
  };
  return (
    <>
      {' · '}
      <span class="inbox-by-trust" data-testid="by-trust" title={`${a.team} at "${a.actionClass ?? ''}"`}>
        allowed by trust{people.length ? ` (earned from ${people.join(', ')})` : ''}
      </span>{' '}
      {state === 'done' ? (
        <span data-testid="trust-revoked">revoked: the next one waits</span>
      ) : (
        <button type="button" class="inbox-revoke" data-testid="trust-revoke" disabled={state === 'busy'} onClick={() => void revoke()}>
          Revoke
        </button>
      )}
      {state && state !== 'busy' && state !== 'done' && <span role="alert"> {state}</span>}
    </>
  );
}

/**
 * The newest call of one floor agent that trust allowed, for its card (issue
 * 30: "on the agent's card"): the call, "allowed by trust" with who earned it,
 * and Revoke. Nothing when none of its recent calls was allowed by trust.
 */
export function AgentTrusted(props: { agent: string }) {
  const client = useApprovals(pageProject());
  const a = recentApprovals(client.state, 100).find((x) => x.asker === props.agent && x.trust);
  if (!a) return null;
  return (
    <p class="inbox-on-card inbox-trusted" data-testid="card-by-trust">
      <code class="inbox-tool">{a.tool}</code> <span class="inbox-digest">{a.input}</span>
      <TrustLine a={a} />
    </p>
  );
}
