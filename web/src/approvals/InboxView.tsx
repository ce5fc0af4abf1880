// The approvals inbox: every pending decision of every kind in one place
// (agents' hooks, the fleet board's sessions, ...), oldest first, answered
// with Allow or Deny through the one decide endpoint; below, the recent
// outcomes (who decided, when). Driven only by the approvals stream through the shared
// fold: nothing polls, and a click changes nothing until its outcome comes
// back on the stream (the first decision in the log wins, whoever made it).

import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { recentApprovals } from '../../../src/core/approvals.js';
import { useApprovals } from '../live/approvals.js';
import { ConnectionBadge } from '../shared/ConnectionBadge.js';
import { Notifications } from '../shared/Notifications.js';
import { ProjectSwitcher } from '../shared/ProjectSwitcher.js';
import { FirstStep } from '../shared/FirstStep.js';
import { ApprovalItem } from '../shared/approvals/ApprovalItem.js';
import { BulkBar, BULK_MAX, pickable, type Picked } from './Bulk.js';
import { BudgetNotices } from './BudgetNotices.js';
import { TrustLine } from '../shared/approvals/TrustLine.js';
import { decisionOfPath, firstLook } from '../shared/approvals/first.js';
import { pageProject } from '../shared/scope.js';
import { useNow } from '../shared/time.js';
import { useWaiting } from '../shared/waiting.js';
import './inbox.css';

const OUTCOME: Record<string, string> = { allowed: 'Allowed', denied: 'Denied', expired: 'No answer: denied', withdrawn: 'Withdrawn' };

/**
 * One decision, first on the page (a notification opened it): the request
 * with its answer buttons while it waits, its outcome once it is closed, or
 * word that it is not known while the stream has not brought it. It shows
 * the project's one approvals fold; only before that fold's first snapshot
 * it shows the server's answer to one GET of the request (`firstLook`, asked
 * by the shell as the page started), so a fresh page can be answered without
 * waiting for the stream. A decision made then goes through the one decide
 * endpoint as always, and its outcome comes on the stream.
 */
function Decision(props: { id: string; project: string }) {
  const client = useApprovals(props.project);
  const now = useNow();
  const ready = client.ready;
  const look = ready ? null : firstLook(props.id, props.project);
  const [, settled] = useState(0);
  useEffect(() => {
    if (!look || look.value !== undefined) return;
    let on = true;
    void look.promise.then(() => on && settled((n) => n + 1));
    return () => {
      on = false;
    };
  }, [look]);
  const a = ready ? client.state.byId.get(props.id) : (look?.value ?? undefined);
  const box = useRef<HTMLElement>(null);
  // Focus moves to the decision once it shows, so a keyboard or a screen reader starts there:
  // in the same commit as it appears (a layout effect), not a frame later.
  const shown = !!a;
  const answerable = a?.status === 'pending';
  useLayoutEffect(() => {
    if (shown) box.current?.focus();
  }, [shown, props.id]);
  // A User Timing mark once its answer buttons are in the page (the bench's "decision interactive").
  useLayoutEffect(() => {
    if (answerable) performance.mark('roost:decision', { detail: props.id });
  }, [answerable, props.id]);
  return (
    <section class="inbox-decision" aria-labelledby="inbox-decision-h" data-testid="decision" ref={box} tabIndex={-1}>
      <h2 id="inbox-decision-h">The decision</h2>
      {!a ? (
        <p class="inbox-empty" data-testid="decision-unknown">
          {client.connection === 'live' ? 'This request is not among the recent ones: it may be long closed.' : 'Loading…'}
        </p>
      ) : a.status === 'pending' ? (
        <ul class="inbox-list">
          <ApprovalItem a={a} now={now} />
        </ul>
      ) : (
        <p class="inbox-out" data-testid="decision-outcome">
          <span class="inbox-outcome">{OUTCOME[a.status] ?? a.status}</span> <code class="inbox-tool">{a.tool}</code> {a.askerName}
          {a.trust ? <TrustLine a={a} project={props.project} /> : a.decidedBy && <> · by {a.decidedBy}</>}
        </p>
      )}
    </section>
  );
}

export function InboxView() {
  // The page's project; the same list the floor's "Waiting for you" and the nav badge count.
  const { list: pending, client } = useWaiting();
  const now = useNow();
  const recent = recentApprovals(client.state, 20);
  const decision = decisionOfPath(location.pathname);
  // The bulk selection (./Bulk.tsx): kept by id even once a request leaves the list, so a decision someone else made meanwhile comes back as that item's 409.
  const [picked, setPicked] = useState<Picked>(() => new Map());
  const toggle = (a: (typeof pending)[number]) => {
    const next = new Map(picked);
    if (next.has(a.id)) next.delete(a.id);
    else if (next.size < BULK_MAX) next.set(a.id, a);
    setPicked(next);
  };
  return (
    <div class="inbox" data-testid="inbox">
      <div class="inbox-bar">
        <h1>Approvals</h1>
        <ProjectSwitcher testid="inbox-project" />
        <ConnectionBadge state={client.connection} testid="inbox-connection" />
      </div>
      {decision && <Decision id={decision} project={pageProject()} />}
      <section aria-labelledby="inbox-pending-h">
        <h2 id="inbox-pending-h">
          Waiting for you <span class="inbox-n" data-testid="inbox-count">{pending.length}</span>
        </h2>
        {/* Above the list and outside it: its result stays once the decided requests leave the list. */}
        <BulkBar pending={pending} picked={picked} setPicked={setPicked} />
        {pending.length === 0 ? (
          <div class="inbox-empty" data-testid="inbox-empty">
            <p>
              Nothing waits for a decision. With <code>roost hooks install --approvals Bash</code>, an agent’s Bash calls wait here; so do the fleet board’s sessions that ask, the flock’s verdicts and a nest’s asks for the owner (approved by typing their phrase).
            </p>
            <FirstStep command="npx roost hooks install --user --approvals Bash" testid="first-step-inbox" />
          </div>
        ) : (
          <ul class="inbox-list" aria-live="polite">
            {pending.map((a) => (
              <ApprovalItem key={a.id} a={a} now={now} pick={pickable(a) ? { checked: picked.has(a.id), toggle: () => toggle(a) } : undefined} />
            ))}
          </ul>
        )}
      </section>
      {/* Budgets at 80% or paused (the usage fold's crossings), each linking to the Cost page. */}
      <BudgetNotices project={pageProject()} />
      <section aria-labelledby="inbox-recent-h">
        <h2 id="inbox-recent-h">Recent</h2>
        {recent.length === 0 ? (
          <p class="inbox-empty">No decisions yet.</p>
        ) : (
          <ul class="inbox-recent" data-testid="inbox-recent">
            {recent.map((a) => (
              <li key={a.id} class={`inbox-out inbox-out-${a.status}`}>
                <span class="inbox-outcome">{OUTCOME[a.status] ?? a.status}</span> <code class="inbox-tool">{a.tool}</code> <span class="inbox-digest">{a.input}</span>
                <span class="inbox-meta">
                  {a.askerName}
                  {a.trust ? <TrustLine a={a} /> : a.decidedBy && <> · by {a.decidedBy}</>}
                  {a.decidedAt !== null && <> · {new Date(a.decidedAt).toLocaleTimeString()}</>}
                </span>
              </li>
            ))}
          </ul>
        )}
      </section>
      <Notifications />
    </div>
  );
}
