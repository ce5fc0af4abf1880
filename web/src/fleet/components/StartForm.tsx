// Starting a session: a name, where it works (its own worktree or the root
// itself) and a root. The request goes to the thread's workstation bridge;
// the board shows the session once the bridge has started it.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { SESSION_LIMITS, type SessionFlavor } from '../../../../src/core/fleet.js';
import { newSessionId, requestStart } from '../api.js';
import { FLAVOR_TEXT } from '../look.js';

export function StartForm(props: { thread: string; onDone: () => void }) {
  const [name, setName] = useState('');
  const [flavor, setFlavor] = useState<SessionFlavor>('scoped');
  const [root, setRoot] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const nameRef = useRef<HTMLInputElement>(null);
  // Focus in the same commit as the form appears (a layout effect), not a frame later.
  useLayoutEffect(() => {
    nameRef.current?.focus();
  }, []);
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
        <input id="start-name" ref={nameRef} value={name} maxLength={SESSION_LIMITS.name} required placeholder="fix-login" onInput={(e) => setName((e.currentTarget).value)} />
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
        <input id="start-root" value={root} maxLength={SESSION_LIMITS.root} placeholder="the bridge's root" aria-describedby="start-root-help" onInput={(e) => setRoot((e.currentTarget).value)} />
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
