// The role-aware composer: a message to a conversation, or a command for an
// agent (queued; one runs at a time). Says why when this person cannot write.
import { useState } from 'preact/hooks';
import type { Agent, Conversation } from '../../../../src/core/work.js';
import type { WorkModel } from '../../live/work.js';
import { postJson } from '../../shared/api.js';

/** Drafts per chat, for this tab: switching chats keeps what was typed. */
const drafts = new Map<string, string>();

export function Composer(props: { conv: Conversation; agent: Agent | null; project: string | null; general: boolean; canWrite: boolean; role: string | null; me: string; model: WorkModel }) {
  const draftKey = `${props.general ? 'private' : props.project}/${props.conv.id}`;
  const [text, setTextState] = useState(() => drafts.get(draftKey) ?? '');
  const setText = (v: string) => {
    if (v) drafts.set(draftKey, v);
    else drafts.delete(draftKey);
    setTextState(v);
  };
  const [err, setErr] = useState<string | null>(null);
  const { conv, agent } = props;
  const space = agent ? props.model.spaces[agent.space] : null;
  let blocked: string | null = null;
  if (!props.general && !props.canWrite) blocked = props.role === 'viewer' ? 'Viewers can read, not write.' : 'You cannot write here.';
  else if (agent && agent.state === 'ended') blocked = 'This agent has ended.';
  else if (agent && space && !space.contributed) blocked = `${space.name} was revoked: no new commands.`;
  else if (agent && !agent.callable && space && space.owner.uid !== props.me) blocked = `Trusted local: read-only unless ${space.owner.name} makes it callable.`;
  const send = async () => {
    const t = text.trim();
    if (!t) return;
    setErr(null);
    const r = agent
      ? await postJson('/api/v2/commands', { project: props.project, agent: agent.id, text: t })
      : props.general
        ? await postJson('/api/v2/conversations/general/messages', { text: t })
        : await postJson(`/api/v2/conversations/${encodeURIComponent(conv.id)}/messages`, { project: props.project, text: t });
    if (r.ok) setText('');
    else setErr(r.message);
  };
  return (
    <form
      class="composer"
      onSubmit={(e) => {
        e.preventDefault();
        void send();
      }}
    >
      <textarea
        data-testid="composer"
        rows={2}
        value={text}
        disabled={blocked !== null}
        placeholder={blocked ?? (agent ? `Command for ${agent.label} (queued; one at a time)` : 'Message')}
        aria-label={agent ? 'Command' : 'Message'}
        onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey) {
            e.preventDefault();
            void send();
          }
        }}
      />
      <button class="primary" data-testid="send" disabled={blocked !== null || !text.trim()}>
        {agent ? 'Queue' : 'Send'}
      </button>
      {blocked && (
        <p class="muted small" data-testid="composer-blocked">
          {blocked}
        </p>
      )}
      {err && (
        <p class="error" data-testid="composer-error">
          {err}
        </p>
      )}
    </form>
  );
}
