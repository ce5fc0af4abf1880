// An ask_owner as a card: the exact phrase that approves it, its state
// (pending with the deadline and the time left, approved, rejected) and, while
// it is open, the phrase box. Answering posts the owner's reply into the nest,
// referring to the ask: that reply is the decision (the contract's rule). The
// phrase approves it; any other reply is not a yes and leaves the ask open
// (a right reply later in the window still approves it; silence rejects it
// at the deadline), so the box says before sending whether the words match.
// Only the owner answers (shared mode: the owner role); others see the state.
import { useEffect, useState } from 'preact/hooks';
import type { NestRecord } from '../../../../src/core/flock.js';
import { postJson } from '../../shared/api.js';
import { nameHeaders } from '../../shared/me.js';
import { inProject } from '../../shared/scope.js';
import { clock, since } from '../../shared/time.js';
import { useWho } from '../../shared/projects.js';
import { answersAsks, askState, matchesPhrase } from '../nests.js';

export function AskCard(props: { r: NestRecord; nest_id: string; byId: Map<string, NestRecord> }) {
  const { r, nest_id } = props;
  // Only an open ask ticks: it counts down and turns rejected at its deadline.
  const [tick, setNow] = useState(Date.now());
  const now = Math.max(tick, Date.now());
  const a = askState(r, now);
  useEffect(() => {
    if (a.state !== 'pending') return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [a.state]);
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<{ status: number; message: string } | null>(null);
  const matches = matchesPhrase(text, r.approval_phrase);
  const mayAnswer = answersAsks(useWho());
  const boxId = `ask-${r.msg_id}-answer`;

  const send = async (e: Event) => {
    e.preventDefault();
    if (busy || !text.trim()) return;
    setBusy(true);
    setRefusal(null);
    const res = await postJson(inProject(`/api/nests/${encodeURIComponent(nest_id)}/messages`), { text, refers_to: r.msg_id }, nameHeaders());
    setBusy(false);
    if (res.ok) setText('');
    else setRefusal({ status: res.status, message: res.message });
  };

  const reply = a.state !== 'pending' && a.reply ? props.byId.get(a.reply) : undefined;
  return (
    <div class={`ask ask-${a.state}`} data-testid={`nest-ask-${r.msg_id}`} data-resolved={a.state === 'pending' ? '' : a.state} role="group" aria-label={`Decision asked of the owner, #${r.msg_id}`}>
      <p class="ask-phrase">
        To approve, reply with exactly: <code data-testid={`nest-ask-phrase-${r.msg_id}`}>{r.approval_phrase}</code>
      </p>
      <p class="ask-state" data-testid={`nest-ask-state-${r.msg_id}`} aria-live="polite">
        {a.state === 'pending' ? (
          <>
            <strong>Pending</strong>: answer by {clock(a.deadline)} (in {since(a.deadline - now)}). Any other reply is not a yes (the ask stays open); silence is a no.
          </>
        ) : a.state === 'approved' ? (
          <>
            <strong>Approved</strong> by the owner’s reply{reply ? ` #${reply.msg_id}` : ''}.
          </>
        ) : (
          <>
            <strong>Rejected</strong>: {reply ? `refused in the approvals inbox (#${reply.msg_id}).` : `nobody answered with the phrase by ${clock(a.deadline)}.`}
          </>
        )}
      </p>
      {a.state === 'pending' && !mayAnswer && (
        <p class="fl-muted" data-testid={`nest-ask-owner-only-${r.msg_id}`}>
          Only the project’s owner answers this.
        </p>
      )}
      {a.state === 'pending' && mayAnswer && (
        <form class="ask-box" onSubmit={(e) => void send(e)}>
          <label for={boxId} class="sr-only">
            Your answer to #{r.msg_id}
          </label>
          <input
            id={boxId}
            data-testid={`nest-ask-input-${r.msg_id}`}
            value={text}
            placeholder={`Type “${r.approval_phrase}” to approve`}
            autoComplete="off"
            aria-describedby={`${boxId}-hint`}
            onInput={(e) => setText((e.target as HTMLInputElement).value)}
          />
          <button type="submit" class="primary" data-testid={`nest-ask-send-${r.msg_id}`} disabled={busy || !text.trim()}>
            {matches ? 'Approve' : 'Answer'}
          </button>
          <span id={`${boxId}-hint`} class={`ask-hint${text.trim() && !matches ? ' ask-hint-no' : ''}`} data-testid={`nest-ask-hint-${r.msg_id}`}>
            {!text.trim() ? '' : matches ? 'Matches the phrase: sending approves.' : 'Not the phrase: sending this is not a yes (the ask stays open).'}
          </span>
        </form>
      )}
      {refusal && (
        <p class="fl-refusal" role="alert" data-status={refusal.status}>
          {refusal.message}
        </p>
      )}
    </div>
  );
}
