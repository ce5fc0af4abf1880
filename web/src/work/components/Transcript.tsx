// One chat's messages, in order, with each command's state beside the prompt
// that queued it; in General Chat, a way to start a message's work in the
// project: queued to an agent the person picks (it moves the request, not the
// chat), or, when no agent there can take it, said so.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Agent, Conversation } from '../../../../src/core/work.js';
import type { WorkModel } from '../../live/work.js';
import { postJson } from '../../shared/api.js';
import { clock } from '../../shared/time.js';

/** A message's time: `HH:MM` today, with the date before it on another day. */
function stamp(at: number): string {
  const d = new Date(at);
  return d.toDateString() === new Date().toDateString() ? clock(at) : `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${clock(at)}`;
}

/** The project's agents that would take a command from me now (as the server's `mayCommand` decides). */
function takers(model: WorkModel, me: string): Agent[] {
  return Object.values(model.agents)
    .filter((a) => {
      const sp = model.spaces[a.space];
      return a.state !== 'ended' && !!sp?.contributed && (a.callable || sp.owner.uid === me);
    })
    .sort((a, b) => a.label.localeCompare(b.label));
}

export function Transcript(props: {
  conv: Conversation;
  model: WorkModel;
  /** The selected project's model (its agents), also while General Chat is shown. */
  projectModel: WorkModel;
  general: boolean;
  me: string;
  project: string | null;
  projectName: string;
  canLink: boolean;
  onOpen: (id: string) => void;
}) {
  const { conv } = props;
  const end = useRef<HTMLLIElement>(null);
  useEffect(() => end.current?.scrollIntoView({ block: 'end' }), [conv.id, conv.messages.length]);
  const [note, setNote] = useState<string | null>(null);
  // The message whose "Start in" picker is open.
  const [picking, setPicking] = useState<number | null>(null);
  return (
    <div class="transcript-wrap">
      <h1 data-testid="transcript-title">{conv.kind === 'agent' ? conv.title : conv.kind === 'general' ? 'General Chat' : `# ${conv.title}`}</h1>
      {props.general && conv.links.length > 0 && (
        <ul class="links" data-testid="general-links">
          {conv.links.map((l) => (
            <li key={l.conversation}>
              Moved to project <b>{l.project}</b>: {l.title}
              {l.agent && <span class="muted"> (queued to {l.agent})</span>}
              {l.project === props.project && (
                <button class="linkish" onClick={() => props.onOpen(l.conversation)}>
                  open
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {conv.linkedFrom && <p class="muted small">Started from {conv.messages[0]?.by.name}'s General Chat; only the request moved here.</p>}
      <ol class="transcript" data-testid="transcript">
        {conv.messages.map((m) => (
          <li key={m.seq} class={`msg msg-${m.kind}`} data-kind={m.kind} data-seq={m.seq}>
            <span class="who">{m.by.name}</span>
            {m.at > 0 && (
              <time class="at" dateTime={new Date(m.at).toISOString()} title={new Date(m.at).toLocaleString()} data-testid="msg-time">
                {stamp(m.at)}
              </time>
            )}
            <span class="text">{m.text}</span>
            {m.command && (m.kind === 'prompt' || m.kind === 'human') && <CommandMark id={m.command} model={props.model} />}
            {props.general && m.kind === 'human' && m.by.uid === props.me && props.project && props.canLink && (
              <button class="linkish" data-testid={`start-work-${m.seq}`} aria-expanded={picking === m.seq} onClick={() => setPicking(picking === m.seq ? null : m.seq)}>
                Start in {props.projectName}
              </button>
            )}
            {props.general && picking === m.seq && props.project && (
              <StartPicker
                agents={takers(props.projectModel, props.me)}
                projectName={props.projectName}
                start={async (agent) => {
                  const r = await postJson<{ command?: string }>('/api/v2/general/link', agent ? { project: props.project, message: m.seq, agent } : { project: props.project, message: m.seq });
                  if (r.ok) setPicking(null);
                  setNote(r.ok ? (agent ? `Queued in ${props.projectName}` : `Started in ${props.projectName}`) : r.message);
                }}
              />
            )}
          </li>
        ))}
        <li ref={end} class="end" aria-hidden="true" />
      </ol>
      {note && <p class="muted small">{note}</p>}
    </div>
  );
}

/**
 * Where a General Chat message goes: one of the project's agents that would
 * take a command from me (the request is queued to it), or, with none, a plain
 * line saying so; moving the request alone (a conversation, no agent) stays
 * possible either way.
 */
function StartPicker(props: { agents: Agent[]; projectName: string; start: (agent: string | null) => Promise<void> }) {
  const [agent, setAgent] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const chosen = props.agents.find((a) => a.id === agent) ?? props.agents[0] ?? null;
  const go = async (id: string | null) => {
    setBusy(true);
    try {
      await props.start(id);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="start-pick" data-testid="start-pick">
      {chosen ? (
        <>
          <label>
            Queue it to{' '}
            <select data-testid="start-agent" value={chosen.id} onChange={(e) => setAgent((e.target as HTMLSelectElement).value)}>
              {props.agents.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.label || a.id}
                </option>
              ))}
            </select>
          </label>
          <button class="primary" data-testid="start-queue" disabled={busy} onClick={() => void go(chosen.id)}>
            Queue
          </button>
        </>
      ) : (
        <p class="small" role="status" data-testid="start-none">
          No agent in {props.projectName} can take it now: no Space contributed there has a running agent you may send commands to.
        </p>
      )}
      <button class="linkish" data-testid="start-copy" disabled={busy} onClick={() => void go(null)}>
        Move the request only
      </button>
    </div>
  );
}

function CommandMark({ id, model }: { id: string; model: WorkModel }) {
  const c = model.commands[id];
  if (!c) return null;
  return (
    <span class={`cmd-mark cmd-${c.status}`} data-testid={`cmd-${id}`} data-status={c.status}>
      {c.status}
    </span>
  );
}
