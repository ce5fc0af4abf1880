// Handing a list over to the flock: `POST /api/lists`. Local mode: the
// requester is typed (remembered as this browser's name); shared mode: the
// server takes the signed-in member and the field is not shown. Refusals are
// shown as the server words them; a 503 (no model) also says how to connect one.
import { useState } from 'preact/hooks';
import { postJson } from '../../shared/api.js';
import { myName, nameHeaders, setMyName, type Me } from '../../shared/me.js';
import { inProject } from '../../shared/scope.js';

export type Refusal = { status: number; message: string; cooldown_s?: number } | null;

export function HandOver(props: { me: Me; onStarted: (list_id: string) => void }) {
  const [text, setText] = useState('');
  const [requester, setRequester] = useState(myName());
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<Refusal>(null);
  const shared = props.me.mode === 'shared';

  const submit = async (e: Event) => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setRefusal(null);
    if (!shared && requester.trim()) setMyName(requester);
    const body: Record<string, unknown> = { text };
    if (!shared) body.requester = requester;
    const r = await postJson<{ list_id: string }>(inProject('/api/lists'), body, nameHeaders());
    setBusy(false);
    if (r.ok) {
      setText('');
      props.onStarted(r.body.list_id);
      return;
    }
    setRefusal({ status: r.status, message: r.message });
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
        <button type="submit" data-testid="flock-submit" disabled={busy || !text.trim()}>
          {busy ? 'Handing over…' : 'Hand over'}
        </button>
      </div>
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
