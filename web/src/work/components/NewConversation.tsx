import { postJson } from '../../shared/api.js';

/** Starts a conversation in the project (editors and owners): asks for its title. */
export function NewConversation({ project, onMade }: { project: string; onMade: (id: string) => void }) {
  return (
    <button
      class="mini"
      data-testid="new-conversation"
      title="New conversation"
      onClick={async () => {
        const title = prompt('Conversation title');
        if (!title) return;
        const r = await postJson<{ id: string }>('/api/v2/conversations', { project, title });
        if (r.ok) onMade(r.body.id);
      }}
    >
      +
    </button>
  );
}
