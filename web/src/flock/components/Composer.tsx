// Posting to a nest as yourself (no `author`: the server takes the caller's
// own, "owner" or "member:<name>"): `POST /api/nests/{id}/messages` with an
// optional kind header (Jev decides when there is none, and overrides a header
// it is sure disagrees), a request's mode (and a conspiracy's number of
// crows), who it is to, the message it replies to, and an ask_owner's phrase.
// The stored record comes back on the stream; refusals (400, 403, 429) are
// shown in the server's words.
import { useState } from 'preact/hooks';
import type { Ref } from 'preact';
import { CROW_KINDS, FLOCK_LIMITS, NEST_MODES, type FlockState, type Nest, type NestRecord } from '../../../../src/core/flock.js';
import { SERVICE_NAMES, WORKER_NAMES } from '../../../../src/core/personas.js';
import { postJson } from '../../shared/api.js';
import { nameHeaders } from '../../shared/me.js';
import { inProject } from '../../shared/scope.js';
import { useWho } from '../../shared/projects.js';
import { answersAsks, authorWords, snippet } from '../nests.js';

/** The headers the owner may send over HTTP: the crow kinds and ask_owner (nudge and flag are the harness's and the Sentry's). */
const HEADERS = [...CROW_KINDS, 'ask_owner'] as const;

export function Composer(props: {
  state: FlockState;
  nest: Nest;
  replyTo: string;
  replyRecord: NestRecord | undefined;
  onClearReply: () => void;
  textRef: Ref<HTMLTextAreaElement>;
}) {
  const { nest, state } = props;
  const [text, setText] = useState('');
  const [kind, setKind] = useState('');
  const [mode, setMode] = useState('');
  const [invited, setInvited] = useState<number>(FLOCK_LIMITS.murderSize);
  const [to, setTo] = useState('');
  const [phrase, setPhrase] = useState('');
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<{ status: number; message: string } | null>(null);
  const id = `nc-${nest.nest_id}`;
  // Only the owner parks an ask (a member's ask_owner header would be dropped by the server).
  const headers = answersAsks(useWho()) ? HEADERS : CROW_KINDS;

  // Who a message can be to: the nest's crows first, then the rest of the flock, then the service roles.
  const here = [...nest.core, ...[...nest.invited].filter((c) => !nest.core.includes(c))];
  const others = [...WORKER_NAMES, ...[...state.spun.keys()].sort()].filter((c) => !here.includes(c));
  const askMode = kind === '' || kind === 'request';

  const send = async (e?: Event) => {
    e?.preventDefault();
    if (busy || !text.trim()) return;
    setBusy(true);
    setRefusal(null);
    const body: Record<string, unknown> = { text };
    if (kind) body.kind = kind;
    if (to) body.to = to;
    if (props.replyTo) body.refers_to = props.replyTo;
    if (askMode && mode) body.mode = mode;
    if (askMode && mode === 'conspiracy') body.invited = invited;
    if (kind === 'ask_owner') body.approval_phrase = phrase;
    const r = await postJson(inProject(`/api/nests/${encodeURIComponent(nest.nest_id)}/messages`), body, nameHeaders());
    setBusy(false);
    if (!r.ok) return setRefusal({ status: r.status, message: r.message });
    setText('');
    setPhrase('');
    setKind('');
    setMode('');
    props.onClearReply();
  };

  return (
    <form class="ns-composer" data-testid="nest-composer" onSubmit={(e) => void send(e)} aria-label={`Post to ${nest.name} as the owner`}>
      {props.replyTo && (
        <p class="nc-replying" data-testid="nest-replying">
          Replying to #{props.replyTo}
          {props.replyRecord ? ` (${authorWords(props.replyRecord.author)}: “${snippet(props.replyRecord.text, 60)}”)` : ''}{' '}
          <button type="button" class="link" data-testid="nest-reply-cancel" onClick={props.onClearReply} aria-label="Stop replying">
            Cancel
          </button>
        </p>
      )}
      <label for={`${id}-text`} class="sr-only">
        Message
      </label>
      <textarea
        id={`${id}-text`}
        ref={props.textRef}
        data-testid="nest-text"
        rows={2}
        maxLength={FLOCK_LIMITS.messageText}
        value={text}
        placeholder={`Say something to ${nest.name} as the owner (Ctrl+Enter sends)`}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void send(e);
          if (e.key === 'Escape' && props.replyTo) props.onClearReply();
        }}
      />
      <div class="nc-opts">
        <label class="fl-field fl-inline">
          <span>Kind</span>
          <select data-testid="nest-kind" value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value)}>
            <option value="">Jev decides</option>
            {headers.map((k) => (
              <option key={k} value={k}>
                {k === 'ask_owner' ? 'ask_owner (a decision for yourself)' : k}
              </option>
            ))}
          </select>
        </label>
        {askMode && (
          <label class="fl-field fl-inline">
            <span>Mode{kind === '' ? ' (if a request)' : ''}</span>
            <select data-testid="nest-mode" value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value)}>
              <option value="">Jev decides</option>
              {NEST_MODES.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
          </label>
        )}
        {askMode && mode === 'conspiracy' && (
          <label class="fl-field fl-inline">
            <span>Crows</span>
            <input
              type="number"
              data-testid="nest-invited"
              min={1}
              max={FLOCK_LIMITS.murderSize}
              value={invited}
              onInput={(e) => setInvited(Math.max(1, Math.min(FLOCK_LIMITS.murderSize, Number((e.target as HTMLInputElement).value) || 1)))}
            />
          </label>
        )}
        <label class="fl-field fl-inline">
          <span>To</span>
          <select data-testid="nest-to" value={to} onChange={(e) => setTo((e.target as HTMLSelectElement).value)}>
            <option value="">the room</option>
            {here.length > 0 && (
              <optgroup label="This nest">
                {here.map((c) => (
                  <option key={c} value={c}>
                    @{c}
                  </option>
                ))}
              </optgroup>
            )}
            <optgroup label="Service roles">
              {SERVICE_NAMES.map((c) => (
                <option key={c} value={c}>
                  @{c}
                </option>
              ))}
            </optgroup>
            {others.length > 0 && (
              <optgroup label={nest.core.length ? 'Outside the core' : 'The flock'}>
                {others.map((c) => (
                  <option key={c} value={c}>
                    @{c}
                  </option>
                ))}
              </optgroup>
            )}
          </select>
        </label>
        {kind === 'ask_owner' && (
          <label class="fl-field fl-inline">
            <span>Approval phrase</span>
            <input data-testid="nest-phrase" value={phrase} maxLength={FLOCK_LIMITS.phrase} onInput={(e) => setPhrase((e.target as HTMLInputElement).value)} />
          </label>
        )}
        <button type="submit" class="primary" data-testid="nest-send" disabled={busy || !text.trim() || (kind === 'ask_owner' && !phrase.trim())}>
          {busy ? 'Sending…' : 'Send'}
        </button>
      </div>
      {refusal && (
        <p class="fl-refusal" role="alert" data-testid="nest-error" data-status={refusal.status}>
          {refusal.status === 429 ? <strong>Slow down. </strong> : refusal.status === 403 ? <strong>Refused. </strong> : null}
          {refusal.message}
        </p>
      )}
    </form>
  );
}
