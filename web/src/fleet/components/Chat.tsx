// The thread's chat (every prompt, turn, approval and result, projected by the
// shared fold) and its composer, which prompts an open session.
import { memo } from 'preact/compat';
import { useEffect, useRef, useState } from 'preact/hooks';
import { SESSION_LIMITS, type Session } from '../../../../src/core/fleet.js';
import type { ChatEntry, FleetClient } from '../../live/fleet.js';
import { clock } from '../../shared/time.js';
import { prompt } from '../api.js';

export function Chat(props: {
  client: FleetClient;
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
          const el = e.currentTarget;
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
          <select id="composer-to" data-testid="composer-to" value={to} disabled={open.length === 0} onChange={(e) => props.setTo((e.currentTarget).value)}>
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
          onInput={(e) => setText((e.currentTarget).value)}
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
