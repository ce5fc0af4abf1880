// Making a nest: `POST /api/nests` with a name and 1–8 core crows from the
// roster. The new nest arrives on the stream; the page goes to it. Refusals
// (400, 409) are shown as the server words them.
import { useState } from 'preact/hooks';
import { WORKER_NAMES, personaOf } from '../../../../src/core/personas.js';
import { postJson } from '../../shared/api.js';
import { nameHeaders } from '../../shared/me.js';
import { navigate } from '../../shared/navigate.js';
import { inProject } from '../../shared/scope.js';

export function NewNest() {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [crows, setCrows] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<{ status: number; message: string } | null>(null);

  const toggle = (c: string) => setCrows((cs) => (cs.includes(c) ? cs.filter((x) => x !== c) : [...cs, c]));
  const submit = async (e: Event) => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setRefusal(null);
    const r = await postJson<{ nest_id: string }>(inProject('/api/nests'), { name, crows }, nameHeaders());
    setBusy(false);
    if (!r.ok) return setRefusal({ status: r.status, message: r.message });
    setName('');
    setCrows([]);
    setOpen(false);
    navigate(inProject(`/flock/nests/${encodeURIComponent(r.body.nest_id)}`));
  };

  if (!open)
    return (
      <button type="button" class="ns-new-open" data-testid="nest-new-open" onClick={() => setOpen(true)}>
        + New nest
      </button>
    );
  return (
    <form class="ns-new" data-testid="nest-new" onSubmit={(e) => void submit(e)}>
      <label class="fl-field">
        <span>Name (1–40 characters)</span>
        <input data-testid="nest-new-name" value={name} maxLength={60} autoFocus onInput={(e) => setName((e.target as HTMLInputElement).value)} />
      </label>
      <fieldset class="ns-core-pick">
        <legend>Core crows (1 to 8)</legend>
        {WORKER_NAMES.map((c) => (
          <label key={c} class="ns-check" title={personaOf(c)?.epithet}>
            <input type="checkbox" data-testid={`nest-new-crow-${c}`} checked={crows.includes(c)} onChange={() => toggle(c)} />
            {c}
          </label>
        ))}
      </fieldset>
      <div class="fl-row">
        <button type="button" onClick={() => (setOpen(false), setRefusal(null))}>
          Cancel
        </button>
        <button type="submit" class="primary" data-testid="nest-new-submit" disabled={busy || !name.trim() || crows.length === 0}>
          {busy ? 'Making…' : 'Make the nest'}
        </button>
      </div>
      {refusal && (
        <p class="fl-refusal" role="alert" data-testid="nest-new-error" data-status={refusal.status}>
          {refusal.message}
        </p>
      )}
    </form>
  );
}
