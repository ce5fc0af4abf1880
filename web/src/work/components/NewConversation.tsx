// The Conversations heading and, for editors and owners, its "+": a small form
// in the rail asks for the title (no prompt(): it blocks the page, cannot be
// styled or tested, and some browsers suppress it). A refusal is said under it.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { postJson } from '../../shared/api.js';

export function NewConversation({ project, canCreate, onMade }: { project: string | null; canCreate: boolean; onMade: (id: string) => void }) {
  const [open, setOpen] = useState(false);
  const [title, setTitle] = useState('');
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<string | null>(null);
  const plus = useRef<HTMLButtonElement>(null);
  const field = useRef<HTMLInputElement>(null);
  // In the same commit as the field appears (a layout effect, not one after paint): no frame shows the form without the focus in it.
  useLayoutEffect(() => {
    if (open) field.current?.focus();
  }, [open]);
  const close = () => {
    setOpen(false);
    setTitle('');
    setErr(null);
  };
  // Escape and Cancel give the focus back to the "+" that opened the form.
  const cancel = () => {
    close();
    plus.current?.focus();
  };
  const create = async () => {
    const t = title.trim();
    if (!t || !project) return;
    setBusy(true);
    setErr(null);
    const r = await postJson<{ id: string }>('/api/v2/conversations', { project, title: t });
    setBusy(false);
    if (!r.ok) return setErr(r.message);
    close();
    onMade(r.body.id);
  };
  return (
    <>
      <h2>
        Conversations
        {project && canCreate && (
          <button ref={plus} class="mini" data-testid="new-conversation" aria-label="New conversation" title="New conversation" aria-expanded={open} onClick={() => (open ? close() : setOpen(true))}>
            +
          </button>
        )}
      </h2>
      {open && (
        <form
          class="new-conv"
          data-testid="new-conversation-form"
          onSubmit={(e) => {
            e.preventDefault();
            void create();
          }}
        >
          <input
            ref={field}
            data-testid="new-conversation-title"
            aria-label="Conversation title"
            placeholder="Title"
            maxLength={200}
            value={title}
            autoFocus
            onInput={(e) => setTitle((e.target as HTMLInputElement).value)}
            onKeyDown={(e) => e.key === 'Escape' && cancel()}
          />
          <button class="primary" data-testid="new-conversation-create" disabled={busy || !title.trim()}>
            Create
          </button>
          <button type="button" class="mini" onClick={cancel}>
            Cancel
          </button>
          {err && (
            <p class="error" data-testid="new-conversation-error">
              {err}
            </p>
          )}
        </form>
      )}
    </>
  );
}
