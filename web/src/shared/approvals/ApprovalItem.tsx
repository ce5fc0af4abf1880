// Approvals of every kind (an agent's tool call held by its hook, a fleet
// board session's request asked by its bridge, a nest's ask_owner, ...),
// answerable with Allow or Deny (an ask: its phrase typed, then Approve, or
// Reject) wherever they show: the approvals inbox, and the card of the agent on
// the floor. Driven only by the approvals stream through the shared fold
// (../../live/approvals.ts), decided through the one endpoint: a click
// changes nothing until its outcome comes back on the stream.

import { useState } from 'preact/hooks';
import { pendingFor, ruleKeyOf, type Approval } from '../../../../src/core/approvals.js';
import { useApprovals } from '../../live/approvals.js';
import { postJson } from '../api.js';
import { inProject, pageProject } from '../scope.js';
import { since, useNow } from '../time.js';
import { decideApproval } from './api.js';
import { Detail } from './Detail.js';
import './approvals.css';

/** `pick`: the inbox's bulk selection (a checkbox on the item); absent elsewhere. */
export function ApprovalItem(props: { a: Approval; now: number; compact?: boolean; pick?: { checked: boolean; toggle(): void } }) {
  const { a, now } = props;
  const [sent, setSent] = useState(false);
  const [error, setError] = useState('');
  const [typed, setTyped] = useState('');
  const ask = a.kind === 'ask';
  const answer = async (d: 'allow' | 'deny', remember?: 'session') => {
    setSent(true);
    const r = await decideApproval(a.id, d, undefined, { phrase: ask && d === 'allow' ? typed : undefined, remember });
    if (!r.ok) {
      // 409: someone (or the window) was first; the stream is about to say so.
      setError(r.message);
      setSent(r.status === 409);
    }
  };
  // "Allow and trust this class" (owner; docs/approvals.md): offered while earned trust is on and the class may run on trust.
  const trustOn = useApprovals(pageProject()).state.agentTrust.on;
  const trustable = !props.compact && !ask && trustOn && !!a.actionClass && !a.barred && !!a.team;
  const allowAndTrust = async () => {
    setSent(true);
    const r = await postJson(inProject(`/approvals/${encodeURIComponent(a.id)}/trust`), {});
    if (!r.ok) {
      setError(r.message);
      setSent(r.status === 409);
    }
  };
  const left = a.deadline - now;
  const rule = props.compact ? null : ruleKeyOf(a);
  // What "allow for this session" would cover, in the button's words.
  const session = rule === null ? '' : rule === 'edits' ? 'Allow all edits this session' : rule.startsWith('command:') ? 'Allow this command this session' : `Allow ${a.tool} this session`;
  return (
    <li class="inbox-item" data-testid="inbox-item" data-approval={a.id} data-agent={a.asker} data-kind={a.kind}>
      {props.pick && <input type="checkbox" class="inbox-pick" checked={props.pick.checked} onChange={props.pick.toggle} aria-label={`Select ${a.tool} for ${a.askerName}`} data-testid="pick" />}
      <div class="inbox-what">
        {!props.compact && (
          <p class="inbox-who">
            <strong data-testid="inbox-agent">{a.askerName}</strong>
            {a.team && <span class="inbox-team">{a.team}</span>}
            {a.source && <span class="inbox-source">{a.source}</span>}
            {a.kind === 'fleet' && a.scope.thread && (
              <span class="inbox-thread" data-testid="inbox-thread">
                fleet board #{a.scope.thread}
              </span>
            )}
          </p>
        )}
        {ask ? (
          <p class="inbox-ask">
            asks the owner <code class="inbox-tool" data-testid="inbox-tool">{a.tool}</code>
            {a.scope.nest && <span class="inbox-thread"> in nest {a.scope.nest}</span>}
          </p>
        ) : (
          <p class="inbox-ask">
            wants to run <code class="inbox-tool" data-testid="inbox-tool">{a.tool}</code>
          </p>
        )}
        {a.detail ? (
          <Detail detail={a.detail} />
        ) : (
          a.input && (
            <pre class="inbox-input" data-testid="inbox-input">
              {a.input}
            </pre>
          )
        )}
        <p class="inbox-time">
          waiting <span data-testid="inbox-waiting">{since(now - a.requestedAt)}</span>
          {' · '}
          {left > 0 ? <>no answer means deny in {since(left)}</> : <>window passed: denied</>}
        </p>
        {ask && (
          <label class="inbox-phrase">
            Type <q data-testid="inbox-phrase">{a.phrase}</q> to approve; anything else is a no
            <input
              type="text"
              value={typed}
              disabled={sent}
              maxLength={200}
              autocomplete="off"
              data-testid="phrase"
              onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
              onKeyDown={(e) => e.key === 'Enter' && typed.trim() && void answer('allow')}
            />
          </label>
        )}
        {error && (
          <p class="inbox-error" role="alert">
            {error}
          </p>
        )}
      </div>
      <div class="inbox-answer">
        <button class="inbox-allow" disabled={sent || (ask && !typed.trim())} onClick={() => answer('allow')} aria-label={`${ask ? 'Approve' : 'Allow'} ${a.tool} for ${a.askerName}`} data-testid="allow">
          {ask ? 'Approve' : 'Allow'}
        </button>
        {session && (
          <button class="inbox-session" disabled={sent} onClick={() => answer('allow', 'session')} aria-label={`${session} for ${a.askerName}`} data-testid="allow-session">
            {session}
          </button>
        )}
        {trustable && (
          <button class="inbox-session" disabled={sent} onClick={() => void allowAndTrust()} aria-label={`Allow and trust ${a.actionClass ?? ''} for team ${a.team}`} data-testid="allow-trust">
            Allow and trust “{a.actionClass}”
          </button>
        )}
        <button class="inbox-deny" disabled={sent} onClick={() => answer('deny')} aria-label={`${ask ? 'Reject' : 'Deny'} ${a.tool} for ${a.askerName}`} data-testid="deny">
          {ask ? 'Reject' : 'Deny'}
        </button>
      </div>
    </li>
  );
}

/** The pending approvals of one floor agent, for its card (nothing when none). */
export function AgentApprovals(props: { agent: string }) {
  const client = useApprovals(pageProject());
  const now = useNow();
  const list = pendingFor(client.state, props.agent);
  if (list.length === 0) return null;
  return (
    <ul class="inbox-list inbox-on-card" data-testid="card-approvals">
      {list.map((a) => (
        <ApprovalItem key={a.id} a={a} now={now} compact />
      ))}
    </ul>
  );
}
