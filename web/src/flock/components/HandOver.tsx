// Handing a list over to the flock: `POST /api/lists`. Local mode: the
// requester is typed (remembered as this browser's name); shared mode: the
// server takes the signed-in member and the field is not shown. The nest is
// chosen here (`nest_id`; `todo` by default). A requester's running cooldown
// is shown with its time left before they try (the fold's strikes, the same
// rule the server answers 429 by: `cooldownS`). Refusals are shown as the
// server words them; a 503 (no model) also says how to connect one.
import { useEffect, useState } from 'preact/hooks';
import { cooldownS, TODO_NEST, type FlockState } from '../../../../src/core/flock.js';
import { postJson } from '../../shared/api.js';
import { myName, nameHeaders, setMyName, type Me } from '../../shared/me.js';
import { inProject } from '../../shared/scope.js';

export type Refusal = { status: number; message: string; cooldown_s?: number } | null;

/** `state`: the flock's fold (its nests, and requesters' strikes for the cooldown). */
export function HandOver(props: { me: Me; state: FlockState; onStarted: (list_id: string) => void }) {
  const [text, setText] = useState('');
  const [requester, setRequester] = useState(myName());
  const [nest, setNest] = useState(TODO_NEST);
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<Refusal>(null);
  const shared = props.me.mode === 'shared';
  const who = (shared ? props.me.name : requester).replace(/\s+/g, ' ').trim();
  const [now, setNow] = useState(Date.now());
  const left = who ? cooldownS(props.state, who, now) : 0;
  // The time left counts down while a cooldown runs (a tick a second, only then).
  useEffect(() => {
    if (left <= 0) return;
    const t = setTimeout(() => setNow(Date.now()), 1000);
    return () => clearTimeout(t);
  }, [left, now]);
  useEffect(() => setNow(Date.now()), [props.state.rev, who]);
  const nests = [...props.state.nests.values()];

  const submit = async (e: Event) => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setRefusal(null);
    if (!shared && requester.trim()) setMyName(requester);
    const body: Record<string, unknown> = { text };
    if (!shared) body.requester = requester;
    if (nest !== TODO_NEST) body.nest_id = nest;
    const r = await postJson<{ list_id: string }>(inProject('/api/lists'), body, nameHeaders());
    setBusy(false);
    if (r.ok) {
      setText('');
      props.onStarted(r.body.list_id);
      return;
    }
    setRefusal({ status: r.status, message: r.message });
    setNow(Date.now());
  };

  return (
    <form class="fl-hand" data-testid="flock-form" onSubmit={(e) => void submit(e)}>
      <h2>Hand over a list</h2>
      <label class="fl-field">
        <span>One item a line (markdown bullets and checkboxes are fine)</span>
        <textarea
          data-testid="flock-text"
          rows={4}
          value={text}
          placeholder={'- write the release notes\n- review the ship checklist'}
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        />
      </label>
      <div class="fl-row">
        {shared ? (
          <span class="fl-muted">Handed over as {props.me.name || 'you'}</span>
        ) : (
          <label class="fl-field fl-inline">
            <span>Requester</span>
            <input data-testid="flock-requester" value={requester} placeholder="your name" onInput={(e) => setRequester((e.target as HTMLInputElement).value)} />
          </label>
        )}
        <label class="fl-field fl-inline">
          <span>Nest</span>
          <select data-testid="flock-nest" value={nest} onChange={(e) => setNest((e.target as HTMLSelectElement).value)}>
            {nests.map((n) => (
              <option key={n.nest_id} value={n.nest_id}>
                {n.nest_id === TODO_NEST ? 'todo (the whole flock)' : `${n.name} (${n.core.join(', ')})`}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" data-testid="flock-submit" disabled={busy || !text.trim()}>
          {busy ? 'Handing over…' : 'Hand over'}
        </button>
      </div>
      {left > 0 && (
        <p class="fl-cooldown" role="status" data-testid="flock-cooldown" data-left={left}>
          <strong>{who} is cooling down</strong> after too many strikes: new lists are refused for {left} s more.
        </p>
      )}
      {refusal && <RefusalNote r={refusal} />}
    </form>
  );
}

function RefusalNote(props: { r: NonNullable<Refusal> }) {
  const { status, message } = props.r;
  return (
    <div class="fl-refusal" role="alert" data-testid="flock-error" data-status={status}>
      {status === 503 ? (
        <>
          <strong>No model is connected.</strong> The crows need one to fly. Start Roost with a model, for example{' '}
          <code>roost serve --model anthropic:claude-haiku-4-5</code> or <code>roost serve --model ollama:llama3.1:8b</code> (or set{' '}
          <code>ROOST_MODEL</code>); see docs/models.md.
          <p class="fl-muted">{message}</p>
        </>
      ) : status === 429 ? (
        <>
          <strong>Too many lists.</strong> {message}
        </>
      ) : status === 400 ? (
        <>
          <strong>That list was refused.</strong> {message}
        </>
      ) : (
        message
      )}
    </div>
  );
}
