// A nest's chat: the kept messages in msg_id order, each with its kind as a
// chip, who tagged it (Jev, the header, Jev over the header, the default) and
// Jev's probabilities, a request's mode, who it is to, the message it replies
// to and its replies; an ask_owner as a card with its phrase box. Below, the
// composer: the owner posts with an optional kind header.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { NestRecord, Quarantine } from '../../../../src/core/flock.js';
import type { FlockClient } from '../../live/flock.js';
import { clock } from '../../shared/time.js';
import { TAGGED_WORDS, authorWords, pct, repliesOf, snippet, topProbs } from '../nests.js';
import { AskCard } from './AskCard.js';
import { Composer } from './Composer.js';
import { DemoLink } from '../../shared/FirstStep.js';

/** Messages drawn at once (a nest keeps up to 5,000): the newest, and more on request. */
const PAGE = 200;

/** Moves focus (and the view) to a message of the chat. */
export function focusMessage(msg_id: string): void {
  const el = document.getElementById(`msg-${msg_id}`);
  if (!el) return;
  el.scrollIntoView({ block: 'center' });
  el.focus();
}

function Tag(props: { r: NestRecord; question: 'kind' | 'mode' }) {
  const { r, question } = props;
  const by = question === 'kind' ? r.tagged_by : r.mode_tagged_by;
  const t = r.jev[question];
  const top = topProbs(t);
  if (!by) return null;
  return (
    <span class="nm-tag" data-testid={`nest-${question}-tag-${r.msg_id}`} data-tagged-by={by} title={t ? `Jev (${t.source}), band ${t.band}: ${topProbs(t, 9).map(([l, p]) => `${l} ${p.toFixed(3)}`).join(', ')}` : undefined}>
      <span class="sr-only">{question === 'kind' ? 'kind' : 'mode'} tagged by </span>
      <span class="nm-by">{r.kind === 'ask_owner' && by === 'header' ? 'header (an ask stands as posted)' : TAGGED_WORDS[by]}</span>
      {top.length > 0 && (
        <span class="nm-probs" data-testid={`nest-${question}-probs-${r.msg_id}`}>
          {top.map(([label, p]) => (
            <span key={label} class="nm-prob">
              <span class="nm-prob-bar" aria-hidden="true">
                <span style={{ width: `${Math.round(p * 100)}%` }} />
              </span>
              {label} {pct(p)}
            </span>
          ))}
        </span>
      )}
    </span>
  );
}

function Message(props: { r: NestRecord; byId: Map<string, NestRecord>; replies: string[]; quarantined: Set<string>; onReply: (msg_id: string) => void; nest_id: string }) {
  const { r } = props;
  const parent = r.refers_to ? props.byId.get(r.refers_to) : undefined;
  const q = props.quarantined.has(r.author);
  return (
    <li
      id={`msg-${r.msg_id}`}
      tabIndex={-1}
      class={`nm nm-k-${r.kind}${r.author === 'owner' ? ' nm-owner' : ''}${r.refers_to ? ' nm-reply' : ''}`}
      data-testid={`nest-msg-${r.msg_id}`}
      data-kind={r.kind}
      data-author={r.author}
      data-refers-to={r.refers_to}
      aria-labelledby={`msg-${r.msg_id}-head`}
    >
      {r.refers_to && (
        <a
          class="nm-quote"
          href={`#msg-${r.refers_to}`}
          data-testid={`nest-quote-${r.msg_id}`}
          onClick={(e) => (e.preventDefault(), focusMessage(r.refers_to))}
        >
          <span aria-hidden="true">↳ </span>replying to {parent ? `${authorWords(parent.author)}: “${snippet(parent.text, 60)}”` : `#${r.refers_to}`}
        </a>
      )}
      <div class="nm-head" id={`msg-${r.msg_id}-head`}>
        <span class="nm-author">{authorWords(r.author)}</span>
        {q && (
          <span class="ns-badge ns-quarantined" data-testid={`nest-msg-quarantined-${r.msg_id}`}>
            quarantined
          </span>
        )}
        {r.to && <span class="nm-to">→ {r.to === 'owner' ? 'owner' : `@${authorWords(r.to)}`}</span>}
        <span class={`chip chip-${r.kind}`} data-testid={`nest-chip-${r.msg_id}`}>
          <span class="sr-only">kind </span>
          <span class="chip-label">{r.kind === 'ask_owner' ? 'ask owner' : r.kind}</span>
        </span>
        <Tag r={r} question="kind" />
        {r.mode && (
          <>
            <span class="chip chip-mode" data-testid={`nest-mode-${r.msg_id}`}>
              <span class="sr-only">mode </span>
              <span class="chip-label">
                {r.mode}
                {r.mode === 'conspiracy' ? ` ×${r.invited}` : ''}
              </span>
            </span>
            <Tag r={r} question="mode" />
          </>
        )}
        <span class="nm-meta">
          <time dateTime={r.ts}>{clock(r.at)}</time> <span class="nm-id">#{r.msg_id}</span>
        </span>
      </div>
      <p class="nm-text">{r.text}</p>
      {r.kind === 'ask_owner' && <AskCard r={r} nest_id={props.nest_id} byId={props.byId} />}
      {r.watch && (
        <p class={`nm-watch${r.watch.breach ? ' nm-breach' : ''}`} data-testid={`nest-watch-${r.msg_id}`}>
          Watchdog{r.watch.breach ? ' (breach)' : ''}: answers the request {pct(r.watch.scores.answers_request)}, fact without source {pct(r.watch.scores.states_fact_without_source)}, contradicts
          earlier {pct(r.watch.scores.contradicts_earlier)}
        </p>
      )}
      <div class="nm-actions">
        <button type="button" class="link" data-testid={`nest-reply-${r.msg_id}`} onClick={() => props.onReply(r.msg_id)} aria-label={`Reply to #${r.msg_id}`}>
          Reply
        </button>
        {props.replies.length > 0 && (
          <span class="nm-replies" data-testid={`nest-replies-${r.msg_id}`}>
            {props.replies.length === 1 ? '1 reply' : `${props.replies.length} replies`}:{' '}
            {props.replies.map((id, i) => (
              <span key={id}>
                {i > 0 && ', '}
                <a href={`#msg-${id}`} onClick={(e) => (e.preventDefault(), focusMessage(id))}>
                  #{id}
                </a>
              </span>
            ))}
          </span>
        )}
      </div>
    </li>
  );
}

export function NestChat(props: { client: FlockClient; nest_id: string; rev: string; quarantined: Quarantine[] }) {
  const { client, nest_id, rev } = props;
  const nest = client.state.nests.get(nest_id)!;
  const records = useMemo(() => [...nest.messages.values()], [nest, rev]);
  const replies = useMemo(() => repliesOf(client.state, nest_id), [client.state, nest_id, rev]);
  const q = useMemo(() => new Set(props.quarantined.map((x) => x.crow)), [props.quarantined]);
  const [replyTo, setReplyTo] = useState('');
  const [shown, setShown] = useState(PAGE);
  const visible = records.length > shown ? records.slice(records.length - shown) : records;
  const log = useRef<HTMLDivElement>(null);
  const composerText = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    setReplyTo('');
    setShown(PAGE);
  }, [nest_id]);
  // Follow the newest message while the reader is at the bottom.
  const atBottom = useRef(true);
  useEffect(() => {
    const el = log.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  }, [records.length, nest_id]);

  const reply = (msg_id: string) => {
    setReplyTo(msg_id);
    composerText.current?.focus();
  };

  return (
    <section class="ns-chat" aria-label={`Nest ${nest.name}`} data-testid="nest-chat" data-nest={nest_id}>
      <header class="ns-head">
        <h2>{nest.name}</h2>
        <span class="fl-muted">
          #{nest_id} · {nest.count === 1 ? '1 message' : `${nest.count} messages`}
        </span>
      </header>
      <div
        class="ns-log"
        ref={log}
        role="log"
        aria-label={`Messages in ${nest.name}`}
        data-testid="nest-log"
        onScroll={(e) => {
          const el = e.currentTarget;
          atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
      >
        {records.length === 0 && (
          <div class="first-step" data-testid="first-step-nest">
            <p class="fl-muted nm-empty">Nothing said here yet. Write a request below and press Send.</p>
            <DemoLink />
          </div>
        )}
        {records.length > shown && (
          <button type="button" class="link nm-earlier" data-testid="nest-earlier" onClick={() => setShown((n) => n + PAGE)}>
            Show earlier messages ({records.length - shown} more)
          </button>
        )}
        <ol class="ns-msgs">
          {visible.map((r) => (
            <Message key={r.msg_id} r={r} byId={nest.messages} replies={replies.get(r.msg_id) ?? []} quarantined={q} onReply={reply} nest_id={nest_id} />
          ))}
        </ol>
      </div>
      <Composer
        state={client.state}
        nest={nest}
        replyTo={replyTo}
        replyRecord={replyTo ? nest.messages.get(replyTo) : undefined}
        onClearReply={() => setReplyTo('')}
        textRef={composerText}
      />
    </section>
  );
}
