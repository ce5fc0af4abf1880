// The fleet board: the shared remote Claude Code sessions of one thread, and
// the thread's chat. Everything shown is folded from the thread's stream by
// the shared fleet fold (../live/fleet.ts), and each request's fate (pending,
// allowed, denied, by whom) from the project's one approvals fold
// (../live/approvals.ts, joined by src/core/fleet-approvals.ts); a member's
// actions are POSTs whose effect comes back on those streams, for them and
// for everyone else alike.
//
// Layout: a bar (connection, thread, who you are, a summary), the sessions as
// cards (open ones first) with a form to start one, and the chat with its
// composer (prompt a session). All of it is plain DOM: native buttons, forms
// and headings, so it works from the keyboard and reads well aloud.

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { useFleet } from '../live/useFleet.js';
import { useApprovals } from '../live/approvals.js';
import { fleetIndex, sessionApprovals } from '../../../src/core/fleet-approvals.js';
import { ConnectionBadge } from '../shared/ConnectionBadge.js';
import { isThread, lastThread, pageProject, projectOfPage, rememberThread } from '../shared/scope.js';
import { Chat } from './components/Chat.js';
import { NameField } from './components/NameField.js';
import { SessionCard } from './components/SessionCard.js';
import { StartForm } from './components/StartForm.js';
import { StartingRow, type StartPending } from './components/StartingRow.js';
import { ThreadPicker } from './components/ThreadPicker.js';
import { FirstStep } from '../shared/FirstStep.js';
import { RewindBar, useRewind, type RewindBody } from '../shared/Rewind.js';
import type { SessionsState } from '../../../src/core/fleet.js';
import './fleet.css';

/** The thread in the URL (`/fleet/<thread>`), else the one looked at last. */
function threadFromPath(): string {
  const m = /^\/fleet\/([^/]+)/.exec(location.pathname);
  if (m) {
    let t = '';
    try {
      t = decodeURIComponent(m[1]);
    } catch {
      // A malformed escape in a typed URL: not a thread.
    }
    if (isThread(t)) return t;
  }
  return lastThread();
}

export function FleetView() {
  const thread = threadFromPath();
  useEffect(() => rememberThread(thread), [thread]);
  const client = useFleet(thread, projectOfPage());
  const [composerTo, setComposerTo] = useState('');
  const composerRef = useRef<HTMLTextAreaElement>(null);
  // Requests this tab stopped watching (a refusal read, or a bridge that is not coming).
  const [dismissed, setDismissed] = useState<ReadonlySet<string>>(() => new Set());
  const [showStart, setShowStart] = useState(false);
  const newRef = useRef<HTMLButtonElement>(null);
  // Closing the start form (started, Escape) gives the focus back to its button.
  const closeStart = () => {
    setShowStart(false);
    newRef.current?.focus();
  };

  // Rewind: the board as it was at `?at=` (the server's fold of the past), read-only; the live board keeps folding behind it.
  const rewind = useRewind<RewindBody & SessionsState>(`/fleet/${encodeURIComponent(thread)}/rewind`);
  const past = rewind.active;
  const sessions = (rewind.shown ?? client.state).sessions;
  const open = sessions.filter((s) => s.state !== 'ended');
  const ended = sessions.filter((s) => s.state === 'ended');
  // Each request's fate is the approvals fold's (the fold changes its state in place: `rev` says it changed); the rewound past shows the board's own.
  const approvals = useApprovals(pageProject());
  const index = useMemo(() => fleetIndex(approvals.state, thread), [approvals.state, approvals.state.rev, thread]);
  const requestsOf = (s: (typeof sessions)[number]) => (past ? s.approvals : sessionApprovals(s, index));
  const waitingApprovals = open.reduce((n, s) => n + requestsOf(s).filter((a) => a.state === 'pending').length, 0);
  // A start request is settled once the bridge's spawn with its id is on the board.
  const unsettled: StartPending[] = [];
  if (!past) for (const [id, r] of client.requests) {
    if (!dismissed.has(id) && !sessions.some((s) => s.id === id)) unsettled.push({ id, name: r.session, by: r.by, refused: r.refused });
  }

  // `?session=<id>` (a search hit opens it): that session's card is brought into view once it is on the board.
  const [found, setFound] = useState('');
  const wanted = new URLSearchParams(location.search).get('session') ?? '';
  const onBoard = wanted !== '' && sessions.some((s) => s.id === wanted);
  useEffect(() => {
    if (!onBoard || found === wanted) return;
    const card = document.querySelector<HTMLElement>(`[data-testid="session-${CSS.escape(wanted)}"]`);
    if (!card) return;
    card.scrollIntoView({ block: 'center' });
    card.classList.add('scard-found');
    setFound(wanted);
  }, [onBoard, wanted, found]);

  const promptSession = (id: string) => {
    setComposerTo(id);
    composerRef.current?.focus();
  };

  return (
    <div class="fleet" data-testid="board">
      <div class="fleet-bar">
        <ConnectionBadge state={client.connection} testid="board-connection" />
        <ThreadPicker thread={thread} />
        {client.bridges !== null && (
          <p class={`presence${client.bridges === 0 ? ' none' : ''}`} data-testid="bridge-presence" data-count={client.bridges} title="Workstation bridges following this thread: they start and run its sessions">
            <span class="dot" aria-hidden="true" />
            {client.bridges === 0 ? 'No bridge follows this thread' : client.bridges === 1 ? 'Bridge connected' : `${client.bridges} bridges connected`}
          </p>
        )}
        <NameField />
        <p class="fleet-summary" data-testid="board-summary">
          {open.length} open session{open.length === 1 ? '' : 's'}
          {waitingApprovals > 0 && (
            <strong class="urgent">
              {' '}
              · {waitingApprovals} approval{waitingApprovals === 1 ? '' : 's'} waiting
            </strong>
          )}
          {ended.length > 0 && ` · ${ended.length} ended`}
        </p>
      </div>
      <RewindBar rewind={rewind} livePosition={client.position} what="The board" />
      {client.denied && (
        <p class="fleet-denied" role="alert" data-testid="board-denied">
          This board is not open to you: {client.denied}
        </p>
      )}
      <div class="fleet-main">
        {/* Rewound: the past in a disabled fieldset, so nothing in it can act (no decision is made from the past). */}
        <fieldset class="sessions rewound-past" disabled={past} aria-labelledby="sessions-h">
          <div class="sessions-head">
            <h1 id="sessions-h">Sessions</h1>
            {!past && <button class="primary" ref={newRef} aria-expanded={showStart} aria-controls="start-form" onClick={() => setShowStart(!showStart)} data-testid="new-session">
              {showStart ? 'Cancel' : 'New session'}
            </button>}
          </div>
          {showStart && !past && (
            <StartForm
              thread={thread}
              onDone={closeStart}
            />
          )}
          {unsettled.length > 0 && (
            <ul class="starting" aria-label="Start requests">
              {unsettled.map((p) => (
                <StartingRow key={p.id} p={p} noBridge={client.bridges === 0} onDismiss={() => setDismissed((d) => new Set(d).add(p.id))} />
              ))}
            </ul>
          )}
          {sessions.length === 0 && unsettled.length === 0 && (
            <div class="fleet-empty" data-testid="board-empty">
              <h2>No sessions in this thread yet</h2>
              <p>
                Start one with <em>New session</em>: the workstation bridge (<code>roost bridge</code>) runs Claude Code for it, and everybody here sees its turns, its approvals
                and its result. Run the bridge on the machine where sessions should run:
              </p>
              <FirstStep command={`npx roost bridge --server ${location.origin} --root ~/code${projectOfPage() ? ` --project ${projectOfPage()}` : ''}${thread !== 'default' ? ` --thread ${thread}` : ''}`} testid="first-step-fleet" />
            </div>
          )}
          <ul class="cards" aria-label="Open sessions">
            {open.map((s) => (
              <li key={s.id}>
                <SessionCard s={s} approvals={requestsOf(s)} thread={thread} live={past ? undefined : client.live.get(s.id)} onPrompt={promptSession} readOnly={past} />
              </li>
            ))}
          </ul>
          {ended.length > 0 && (
            <details class="ended">
              <summary>Ended sessions ({ended.length})</summary>
              <ul class="cards" aria-label="Ended sessions">
                {ended.map((s) => (
                  <li key={s.id}>
                    <SessionCard s={s} approvals={requestsOf(s)} thread={thread} onPrompt={promptSession} readOnly={past} />
                  </li>
                ))}
              </ul>
            </details>
          )}
        </fieldset>
        {past ? (
          <p class="fleet-past-note" data-testid="chat-hidden">
            The chat and its composer are live only: go back to live to read the newest lines and to prompt a session.
          </p>
        ) : (
          <Chat client={client} thread={thread} open={open} to={composerTo} setTo={setComposerTo} textRef={composerRef} />
        )}
      </div>
    </div>
  );
}
