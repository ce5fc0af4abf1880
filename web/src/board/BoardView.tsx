// The fleet board: the shared remote Claude Code sessions of one thread, and
// the thread's chat. Everything shown is folded from the thread's stream by
// the shared sessions fold (live.ts); a member's actions are POSTs whose
// effect comes back on that stream, for them and for everyone else alike.
//
// Layout: a bar (connection, thread, who you are, a summary), the sessions as
// cards (open ones first) with a form to start one, and the chat with its
// composer (prompt a session). All of it is plain DOM: native buttons, forms
// and headings, so it works from the keyboard and reads well aloud.

import { memo } from 'preact/compat';
import { useEffect, useRef, useState } from 'preact/hooks';
import { SESSION_ID_PATTERN as THREAD_OK, SESSION_LIMITS, type Session, type SessionFlavor } from '../../../src/core/fleet.js';
import { useBoard } from './useBoard.js';
import { close, myName, newSessionId, projectOfPage, prompt, requestStart, setMyName, whoAmI, type Me, type Posted } from './api.js';
import { FLAVOR_TEXT, STATE_COLOR, STATE_LABEL, clock, go, lastThread, rememberThread } from './look.js';
import { ApprovalList } from './SessionApprovals.js';
import type { ChatEntry, Connection, SessionsClient } from './live.js';
import './board.css';

const CONNECTION_TEXT: Record<Connection, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  replaying: 'Catching up…',
};

/** The thread in the URL (`/fleet/<thread>`), else the one looked at last. */
function threadFromPath(): string {
  const m = /^\/fleet\/([^/]+)/.exec(location.pathname);
  if (m) {
    const t = decodeURIComponent(m[1]);
    if (THREAD_OK.test(t)) return t;
  }
  return lastThread();
}

/** A start request seen on the stream whose session is not on the board (yet). */
interface StartPending {
  id: string;
  name: string;
  by: string;
  refused: string;
}

export function BoardView() {
  const thread = threadFromPath();
  useEffect(() => rememberThread(thread), [thread]);
  const client = useBoard(thread, projectOfPage());
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

  const sessions = client.state.sessions;
  const open = sessions.filter((s) => s.state !== 'ended');
  const ended = sessions.filter((s) => s.state === 'ended');
  const waitingApprovals = open.reduce((n, s) => n + s.approvals.filter((a) => a.state === 'pending').length, 0);
  // A start request is settled once the bridge's spawn with its id is on the board.
  const unsettled: StartPending[] = [];
  for (const [id, r] of client.requests) {
    if (!dismissed.has(id) && !sessions.some((s) => s.id === id)) unsettled.push({ id, name: r.session, by: r.by, refused: r.refused });
  }

  const promptSession = (id: string) => {
    setComposerTo(id);
    composerRef.current?.focus();
  };

  return (
    <div class="board" data-testid="board">
      <div class="board-bar">
        <div class={`conn conn-${client.connection}`} data-testid="board-connection" data-state={client.connection} role="status" aria-live="polite">
          <span class="dot" aria-hidden="true" />
          {CONNECTION_TEXT[client.connection]}
        </div>
        <ThreadPicker thread={thread} />
        {client.bridges !== null && (
          <p class={`presence${client.bridges === 0 ? ' none' : ''}`} data-testid="bridge-presence" data-count={client.bridges} title="Workstation bridges following this thread: they start and run its sessions">
            <span class="dot" aria-hidden="true" />
            {client.bridges === 0 ? 'No bridge follows this thread' : client.bridges === 1 ? 'Bridge connected' : `${client.bridges} bridges connected`}
          </p>
        )}
        <NameField />
        <p class="board-summary" data-testid="board-summary">
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
      {client.denied && (
        <p class="board-denied" role="alert" data-testid="board-denied">
          This board is not open to you: {client.denied}
        </p>
      )}
      <div class="board-main">
        <section class="sessions" aria-labelledby="sessions-h">
          <div class="sessions-head">
            <h1 id="sessions-h">Sessions</h1>
            <button class="primary" ref={newRef} aria-expanded={showStart} aria-controls="start-form" onClick={() => setShowStart(!showStart)} data-testid="new-session">
              {showStart ? 'Cancel' : 'New session'}
            </button>
          </div>
          {showStart && (
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
            <div class="board-empty" data-testid="board-empty">
              <h2>No sessions in this thread yet</h2>
              <p>
                Start one with <em>New session</em>: the workstation bridge (<code>roost bridge</code>) runs Claude Code for it, and everybody here sees its turns, its approvals
                and its result.
              </p>
            </div>
          )}
          <ul class="cards" aria-label="Open sessions">
            {open.map((s) => (
              <li key={s.id}>
                <SessionCard s={s} thread={thread} live={client.live.get(s.id)} onPrompt={promptSession} />
              </li>
            ))}
          </ul>
          {ended.length > 0 && (
            <details class="ended">
              <summary>Ended sessions ({ended.length})</summary>
              <ul class="cards" aria-label="Ended sessions">
                {ended.map((s) => (
                  <li key={s.id}>
                    <SessionCard s={s} thread={thread} onPrompt={promptSession} />
                  </li>
                ))}
              </ul>
            </details>
          )}
        </section>
        <Chat client={client} thread={thread} open={open} to={composerTo} setTo={setComposerTo} textRef={composerRef} />
      </div>
    </div>
  );
}

function ThreadPicker(props: { thread: string }) {
  const [value, setValue] = useState(props.thread);
  useEffect(() => setValue(props.thread), [props.thread]);
  const ok = THREAD_OK.test(value);
  return (
    <form
      class="thread-pick"
      onSubmit={(e) => {
        e.preventDefault();
        if (ok && value !== props.thread) go(`/fleet/${encodeURIComponent(value)}${location.search}`);
      }}
    >
      <label for="thread-input">Thread</label>
      <input id="thread-input" value={value} size={12} maxLength={64} aria-invalid={!ok} onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value.trim())} />
      <button type="submit" disabled={!ok || value === props.thread}>
        Open
      </button>
    </form>
  );
}

/**
 * Who this tab posts as. Local mode: a label the person types (the
 * `Roost-Name` header), to tell the owner's tabs apart. Shared mode: the
 * signed-in member, whom the server knows; nothing to type.
 */
function NameField() {
  const [name, setName] = useState(myName);
  const [me, setMe] = useState<Me | null>(null);
  useEffect(() => {
    let live = true;
    void whoAmI().then((m) => live && setMe(m));
    return () => {
      live = false;
    };
  }, []);
  if (me?.mode === 'shared') {
    return (
      <p class="me" data-testid="signed-in">
        Signed in as <strong>{me.name}</strong>
      </p>
    );
  }
  return (
    <div class="me">
      <label for="me-input">Your name</label>
      <input
        id="me-input"
        data-testid="my-name"
        value={name}
        size={12}
        maxLength={SESSION_LIMITS.by}
        placeholder="local owner"
        onInput={(e) => {
          const v = (e.currentTarget as HTMLInputElement).value;
          setName(v);
          setMyName(v);
        }}
      />
    </div>
  );
}

function StartForm(props: { thread: string; onDone: () => void }) {
  const [name, setName] = useState('');
  const [flavor, setFlavor] = useState<SessionFlavor>('scoped');
  const [root, setRoot] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const nameRef = useRef<HTMLInputElement>(null);
  useEffect(() => nameRef.current?.focus(), []);
  const submit = async (e: Event) => {
    e.preventDefault();
    const session = name.trim();
    if (!session) {
      setError('Give the session a name.');
      nameRef.current?.focus();
      return;
    }
    setBusy(true);
    setError('');
    const id = newSessionId(session);
    const r = await requestStart(props.thread, { id, session, flavor, root: root.trim() });
    setBusy(false);
    if (!r.ok) {
      setError(r.message);
      return;
    }
    props.onDone();
  };
  return (
    <form
      id="start-form"
      class="start-form"
      aria-label="Start a session"
      onSubmit={submit}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          props.onDone();
        }
      }}
      data-testid="start-form"
    >
      <div class="field">
        <label for="start-name">Name</label>
        <input id="start-name" ref={nameRef} value={name} maxLength={SESSION_LIMITS.name} required placeholder="fix-login" onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
      </div>
      <fieldset class="field">
        <legend>Where it works</legend>
        {(['scoped', 'plain'] as const).map((f) => (
          <label key={f} class="radio">
            <input type="radio" name="flavor" value={f} checked={flavor === f} onChange={() => setFlavor(f)} />
            <span>
              <strong>{f === 'scoped' ? 'Scoped' : 'Plain'}</strong>: {FLAVOR_TEXT[f]}
            </span>
          </label>
        ))}
      </fieldset>
      <div class="field">
        <label for="start-root">Root</label>
        <input id="start-root" value={root} maxLength={SESSION_LIMITS.root} placeholder="the bridge's root" aria-describedby="start-root-help" onInput={(e) => setRoot((e.currentTarget as HTMLInputElement).value)} />
        <small id="start-root-help">A folder under the bridge's root; empty for the root itself.</small>
      </div>
      {error && (
        <p class="error" role="alert" data-testid="start-error">
          {error}
        </p>
      )}
      <button class="primary" type="submit" disabled={busy} data-testid="start-submit">
        {busy ? 'Starting…' : 'Start session'}
      </button>
    </form>
  );
}

function StartingRow(props: { p: StartPending; noBridge: boolean; onDismiss: () => void }) {
  const { p } = props;
  // The request is on the stream; how long it has waited is this page's own
  // reckoning (a page opened later starts counting when it sees the request).
  const [since] = useState(Date.now);
  const [, setTick] = useState(0);
  useEffect(() => {
    const t = window.setTimeout(() => setTick((n) => n + 1), 10_500);
    return () => clearTimeout(t);
  }, []);
  const slow = Date.now() - since > 10_000;
  return (
    <li class={`starting-row${p.refused ? ' refused' : ''}`} data-testid={`starting-${p.id}`}>
      {!p.refused && <span class="spinner" aria-hidden="true" />}
      <span>
        {p.refused ? (
          <>
            The bridge did not start “{p.name}”: {p.refused}
          </>
        ) : (
          <>
            {p.by ? `${p.by} asked to start` : 'Starting'} “{p.name}”… waiting for the workstation bridge.
            {props.noBridge ? ' No bridge follows this thread yet: it starts when one connects (roost bridge).' : slow && ' Nothing yet: is roost bridge running for this thread?'}
          </>
        )}
      </span>
      <button class="link" onClick={props.onDismiss} aria-label={`Dismiss “${p.name}”`}>
        Dismiss
      </button>
    </li>
  );
}

// The fold keeps an unchanged session the same object: a card re-renders only when its session changed.
const SessionCard = memo(
  SessionCardView,
  (a, b) => a.s === b.s && a.live === b.live && a.thread === b.thread,
);

function SessionCardView(props: { s: Session; thread: string; live?: { tool: string; text: string }; onPrompt: (id: string) => void }) {
  const { s, thread, live } = props;
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState('');
  const pending = s.approvals.filter((a) => a.state === 'pending');
  const decided = s.approvals.filter((a) => a.state !== 'pending');
  const ended = s.state === 'ended';
  const hid = `session-h-${s.id}`;
  const show = (r: Posted) => setError(r.ok ? '' : r.message);
  return (
    <article class={`scard scard-${s.state}${pending.length ? ' needs' : ''}`} aria-labelledby={hid} data-testid={`session-${s.id}`} data-state={s.state} style={{ '--c': STATE_COLOR[s.state] }}>
      <header>
        <h2 id={hid} data-testid="session-name">
          {s.name}
        </h2>
        <span class="sr-only">State:</span>
        <span class={`pill pill-${s.state}`} data-testid="session-state">
          {STATE_LABEL[s.state]}
        </span>
        <span class="flavor" title={FLAVOR_TEXT[s.flavor]}>
          <span class="sr-only">, flavor </span>
          {s.flavor}
        </span>
      </header>
      <span class="sr-only">Activity:</span>
      <p class="activity" data-testid="session-activity">
        {s.activity || (ended ? (s.reason && s.reason !== 'closed' ? `Ended: ${s.reason}` : 'Closed') : '—')}
      </p>
      {live && (live.tool || live.text) && (
        <p class="live" data-testid="session-live" title="Live output (not kept)">
          {live.tool && <code>{live.tool}</code>} {live.text}
        </p>
      )}
      <dl>
        <dt>Prompts</dt>
        <dd data-testid="session-prompts">{s.prompts}</dd>
        <dt>Turns</dt>
        <dd data-testid="session-turns">{s.turns}</dd>
        {s.root && (
          <>
            <dt>Root</dt>
            <dd>
              <code>{s.root}</code>
            </dd>
          </>
        )}
        {s.worktree && (
          <>
            <dt>Worktree</dt>
            <dd>
              <code>{s.worktree}</code>
            </dd>
          </>
        )}
        {s.by && (
          <>
            <dt>Asked by</dt>
            <dd>{s.by}</dd>
          </>
        )}
        <dt>Result</dt>
        <dd class="result" data-testid="session-result">
          {s.result || '—'}
        </dd>
      </dl>
      {pending.length > 0 && (
        <section class="approvals" aria-label={`Waiting for approval in ${s.name}`}>
          <h3>Needs approval</h3>
          <ApprovalList thread={thread} session={s} approvals={pending} onError={setError} />
        </section>
      )}
      {decided.length > 0 && (
        <details class="decided">
          <summary>Decisions ({decided.length})</summary>
          <ul>
            {decided.map((a) => (
              <li key={a.rid} data-testid={`decided-${a.rid}`} data-state={a.state}>
                <code>{a.tool || 'a tool'}</code> {a.digest && <span class="digest">{a.digest}</span>} — {a.state} by {a.by || 'someone'}
              </li>
            ))}
          </ul>
        </details>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!ended && (
        <footer>
          <button onClick={() => props.onPrompt(s.id)} aria-label={`Prompt ${s.name}`}>
            Prompt
          </button>
          {confirming ? (
            <span class="confirm" role="group" aria-label={`Close ${s.name}?`}>
              <span>Close it? {s.flavor === 'scoped' ? 'Its worktree is removed; committed branches stay.' : 'Its process ends.'}</span>
              <button class="danger" data-testid="close-confirm" onClick={async () => (setConfirming(false), show(await close(thread, s.id)))}>
                Close session
              </button>
              <button onClick={() => setConfirming(false)}>Keep</button>
            </span>
          ) : (
            <button onClick={() => setConfirming(true)} aria-label={`Close ${s.name}…`} data-testid="close">
              Close…
            </button>
          )}
        </footer>
      )}
    </article>
  );
}

function Chat(props: {
  client: SessionsClient;
  thread: string;
  open: Session[];
  to: string;
  setTo: (id: string) => void;
  textRef: preact.RefObject<HTMLTextAreaElement | null>;
}) {
  const { client, open } = props;
  const logRef = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const lines = client.chat;
  const last = lines.length ? lines[lines.length - 1].key : '';
  // The composer's target: the chosen open session, else the only one.
  const to = open.some((s) => s.id === props.to) ? props.to : open.length ? open[open.length - 1].id : '';
  useEffect(() => {
    const el = logRef.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  }, [last]);
  const send = async () => {
    const t = text.trim();
    if (!t || !to || busy) return;
    setBusy(true);
    const r = await prompt(props.thread, to, t);
    setBusy(false);
    if (r.ok) {
      setText('');
      setError('');
    } else setError(r.message);
  };
  return (
    <section class="chat" aria-labelledby="chat-h">
      <h2 id="chat-h">
        Chat <span class="thread-name">#{props.thread}</span>
      </h2>
      <div
        class="chat-log"
        ref={logRef}
        role="log"
        aria-live="polite"
        // While a replay pours in, screen readers wait rather than read the whole history aloud.
        aria-busy={client.connection === 'connecting' || client.connection === 'replaying'}
        aria-label={`Chat of thread ${props.thread}`}
        tabIndex={0}
        data-testid="chat"
        onScroll={(e) => {
          const el = e.currentTarget as HTMLDivElement;
          stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
      >
        <ol>
        {!client.historyComplete && <li class="chat-note">Earlier messages are not shown.</li>}
        {lines.length === 0 && client.historyComplete && <li class="chat-note">Nothing said yet. Prompts, turns, approvals and results appear here.</li>}
        {lines.map((l) => (
          <ChatLine key={l.key} l={l} />
        ))}
        </ol>
      </div>
      <form
        class="composer"
        aria-label="Prompt a session"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        <div class="composer-to">
          <label for="composer-to">To</label>
          <select id="composer-to" data-testid="composer-to" value={to} disabled={open.length === 0} onChange={(e) => props.setTo((e.currentTarget as HTMLSelectElement).value)}>
            {open.length === 0 && <option value="">no open session</option>}
            {open.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </div>
        <label for="composer-text" class="sr-only">
          Prompt
        </label>
        <textarea
          id="composer-text"
          ref={props.textRef}
          data-testid="composer-text"
          rows={2}
          value={text}
          maxLength={SESSION_LIMITS.text}
          placeholder={to ? 'Ask the session… (Enter sends, Shift+Enter for a new line)' : 'Start a session to prompt it'}
          disabled={!to}
          onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              void send();
            }
          }}
        />
        <button class="primary" type="submit" disabled={!to || !text.trim() || busy} data-testid="composer-send">
          Send
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
    </section>
  );
}

// Chat entries never change once made: a line renders once, however long the chat grows.
const ChatLine = memo(function ChatLine(props: { l: ChatEntry }) {
  const l = props.l;
  const who = l.author || 'someone';
  return (
    <li class={`line ${l.action ? 'line-action' : 'line-bubble'}`} data-testid="chat-line" data-type={l.type} data-session={l.session} data-position={l.position}>
      <time dateTime={l.ts ? new Date(l.ts).toISOString() : undefined}>{clock(l.ts)}</time>
      {l.action ? (
        <p>
          <b class="who">{who}</b> <span class="text">{l.text}</span>
        </p>
      ) : (
        <div class="bubble">
          <b class="who">{who}</b>
          <p class="text">{l.text}</p>
        </div>
      )}
    </li>
  );
});
