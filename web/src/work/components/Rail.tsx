// The chats of the page, on the left: my General Chat (private), the
// project's conversations, its agents (one chat each, with their state and
// queue), and the Spaces box. A dot marks what I have not read.
import type { Conversation } from '../../../../src/core/work.js';
import type { WorkModel } from '../../live/work.js';
import { NewConversation } from './NewConversation.js';
import { SpacesBox } from './SpacesBox.js';
import { FirstStep } from '../../shared/FirstStep.js';

export type Selection = { kind: 'general' } | { kind: 'conv'; id: string } | null;

export function Rail(props: {
  project: string | null;
  model: WorkModel;
  general: Conversation | null;
  sel: Selection;
  onSelect: (s: Selection) => void;
  unread: (key: string, c: Conversation) => boolean;
  canCreate: boolean;
  me: string;
  role: string | null;
  spacesTick: number;
}) {
  const { project, model, general, sel, unread } = props;
  const humans = Object.values(model.conversations).filter((c) => c.kind === 'human').sort((a, b) => a.createdAt - b.createdAt);
  const agents = Object.values(model.agents).sort((a, b) => a.firstSeen - b.firstSeen || a.id.localeCompare(b.id));
  return (
    <nav class="rail" data-testid="work-rail" aria-label="Chats">
      <h2>Private</h2>
      <button class={`rail-item ${sel?.kind === 'general' ? 'on' : ''}`} data-testid="chat-general" onClick={() => props.onSelect({ kind: 'general' })}>
        General Chat
        {general && unread('private/general', general) && sel?.kind !== 'general' && <span class="unread" data-testid="unread" aria-label="unread" />}
      </button>
      {!project && <p class="muted small">You are in no project yet. General Chat is yours already.</p>}
      <NewConversation project={project} canCreate={props.canCreate} onMade={(id) => props.onSelect({ kind: 'conv', id })} />
      {humans.map((c) => (
        <button key={c.id} class={`rail-item ${sel?.kind === 'conv' && sel.id === c.id ? 'on' : ''}`} data-testid={`chat-${c.id}`} data-chat-title={c.title} onClick={() => props.onSelect({ kind: 'conv', id: c.id })}>
          # {c.title}
          {unread(`${project}/${c.id}`, c) && !(sel?.kind === 'conv' && sel.id === c.id) && <span class="unread" data-testid="unread" aria-label="unread" />}
        </button>
      ))}
      <h2>Agents</h2>
      {agents.length === 0 && (
        <>
          <p class="muted small">No agent yet. Run roost bridge on your machine and contribute its Space here:</p>
          <FirstStep command={`npx roost bridge --server ${location.origin} --root ~/code --contribute${project && project !== 'default' ? ` --project ${project}` : ''}`} testid="first-step-work" />
        </>
      )}
      {agents.map((a) => {
        const c = model.conversations[a.conversation];
        const on = sel?.kind === 'conv' && sel.id === a.conversation;
        return (
          <button key={a.id} class={`rail-item agent st-${a.state} ${on ? 'on' : ''}`} data-testid={`agent-${a.id}`} data-agent-label={a.label} data-state={a.state} onClick={() => props.onSelect({ kind: 'conv', id: a.conversation })}>
            <span class="st-dot" aria-hidden="true" />
            <span class="rail-label">{a.label}</span>
            <span class="tag">{a.state}</span>
            {a.trustedLocal && <span class="tag local">trusted local</span>}
            {a.queue.length > 0 && <span class="tag q">{a.queue.length} queued</span>}
            {c && unread(`${project}/${c.id}`, c) && !on && <span class="unread" data-testid="unread" aria-label="unread" />}
          </button>
        );
      })}
      {project && <SpacesBox project={project} model={model} me={props.me} role={props.role} tick={props.spacesTick} />}
    </nav>
  );
}
