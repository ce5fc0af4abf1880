// One chat's messages, in order, with each command's state beside the prompt
// that queued it; in General Chat, a way to start a message's work in the
// project (it moves the request, not the chat).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Conversation } from '../../../../src/core/work.js';
import type { WorkModel } from '../../live/work.js';
import { postJson } from '../../shared/api.js';
import { clock } from '../../shared/time.js';

/** A message's time: `HH:MM` today, with the date before it on another day. */
function stamp(at: number): string {
  const d = new Date(at);
  return d.toDateString() === new Date().toDateString() ? clock(at) : `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${clock(at)}`;
}

export function Transcript(props: { conv: Conversation; model: WorkModel; general: boolean; me: string; project: string | null; projectName: string; canLink: boolean; onOpen: (id: string) => void }) {
  const { conv } = props;
  const end = useRef<HTMLLIElement>(null);
  useEffect(() => end.current?.scrollIntoView({ block: 'end' }), [conv.id, conv.messages.length]);
  const [note, setNote] = useState<string | null>(null);
  return (
    <div class="transcript-wrap">
      <h1 data-testid="transcript-title">{conv.kind === 'agent' ? conv.title : conv.kind === 'general' ? 'General Chat' : `# ${conv.title}`}</h1>
      {props.general && conv.links.length > 0 && (
        <ul class="links" data-testid="general-links">
          {conv.links.map((l) => (
            <li key={l.conversation}>
              Moved to project <b>{l.project}</b>: {l.title}
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
            {m.command && m.kind === 'prompt' && <CommandMark id={m.command} model={props.model} />}
            {props.general && m.kind === 'human' && m.by.uid === props.me && props.project && props.canLink && (
              <button
                class="linkish"
                data-testid={`start-work-${m.seq}`}
                onClick={async () => {
                  const r = await postJson('/api/v2/general/link', { project: props.project, message: m.seq });
                  setNote(r.ok ? `Started in ${props.projectName}` : r.message);
                }}
              >
                Start in {props.projectName}
              </button>
            )}
          </li>
        ))}
        <li ref={end} class="end" aria-hidden="true" />
      </ol>
      {note && <p class="muted small">{note}</p>}
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
