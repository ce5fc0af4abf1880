// Work: a project's conversations and its agents' chats, one transcript with a
// role-aware composer, the selected agent's queue, execution, result and
// live terminal; General Chat beside, private, outside the project selector.
//
// Per person, never shared: the selected chat, drafts, and what was read. A
// new agent appearing changes the rail, never the selection.

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Agent, Conversation, Execution, PendingApproval } from '../../../src/core/work.js';
import { decide } from '../board/api.js';
import { boardRequest, post, useWork, type BoardRequest, type Conn, type WorkModel } from './client.js';
import './work.css';

interface ProjectRow {
  id: string;
  name: string;
  role: string;
}

const PROJECT_KEY = 'roost.work.project';
const READ_KEY = 'roost.work.read';

function load<T>(key: string, fallback: T): T {
  try {
    const v = localStorage.getItem(key);
    return v ? (JSON.parse(v) as T) : fallback;
  } catch {
    return fallback;
  }
}
function save(key: string, v: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(v));
  } catch {}
}

function useProjects(): { me: { uid: string; name: string } | null; projects: ProjectRow[]; error: string | null } {
  const [state, set] = useState<{ me: { uid: string; name: string } | null; projects: ProjectRow[]; error: string | null }>({ me: null, projects: [], error: null });
  useEffect(() => {
    fetch('/api/v2/projects').then(async (r) => {
      const j = await r.json().catch(() => ({}));
      if (!r.ok) set({ me: null, projects: [], error: j.message ?? `error ${r.status}` });
      else set({ me: j.me, projects: j.projects, error: null });
    });
  }, []);
  return state;
}

function ConnBadge({ conn }: { conn: Conn }) {
  const label = { connecting: 'Connecting', live: 'Live', reconnecting: 'Reconnecting', closed: 'Closed' }[conn];
  return (
    <span class={`conn conn-${conn === 'closed' ? 'reconnecting' : conn}`} data-testid="work-conn">
      <span class="dot" aria-hidden="true" />
      {label}
    </span>
  );
}

/** General Chat before its first message: empty, ready to write in. */
const EMPTY_GENERAL: Conversation = { id: 'general', kind: 'general', title: 'General Chat', createdBy: { uid: '', name: '' }, createdAt: 0, messages: [], links: [], rev: 0 };

type Selection = { kind: 'general' } | { kind: 'conv'; id: string } | null;

export function WorkView() {
  const { me, projects, error } = useProjects();
  const [project, setProject] = useState<string | null>(null);
  useEffect(() => {
    if (!projects.length) return;
    const saved = load<string | null>(PROJECT_KEY, null);
    setProject((p) => p ?? (projects.find((x) => x.id === saved)?.id ?? projects[0].id));
  }, [projects]);
  const [sel, setSel] = useState<Selection>(null);
  // The agent whose terminal this tab watches: the selected one while it runs.
  const [watchAgent, setWatchAgent] = useState<string | null>(null);
  const live = useWork(project, watchAgent);
  const proj = { model: live.model, conn: live.conn };
  const priv = { model: live.priv };
  const selConv: Conversation | null = sel?.kind === 'conv' ? (proj.model.conversations[sel.id] ?? null) : sel?.kind === 'general' ? (priv.model.conversations.general ?? (priv.model.ready ? EMPTY_GENERAL : null)) : null;
  const selAgent: Agent | null = selConv?.agent ? (proj.model.agents[selConv.agent] ?? null) : null;
  const want = selAgent && selAgent.state !== 'ended' ? selAgent.id : null;
  useEffect(() => setWatchAgent(want), [want]);
  const role = live.closed ? null : (live.role ?? projects.find((p) => p.id === project)?.role ?? null);
  const canWrite = role === 'owner' || role === 'editor';

  // What this person has read, per conversation (message count seen).
  const [read, setRead] = useState<Record<string, number>>(() => load(READ_KEY, {}));
  const seeded = useRef(new Set<string>());
  useEffect(() => {
    if (!proj.model.ready || !project || seeded.current.has(project)) return;
    seeded.current.add(project);
    // First time here: what exists now counts as read, unless a count was kept.
    setRead((r) => {
      const next = { ...r };
      for (const c of Object.values(proj.model.conversations)) if (next[`${project}/${c.id}`] === undefined) next[`${project}/${c.id}`] = c.messages.length;
      return next;
    });
  }, [proj.model.ready, project]);
  const readKey = sel?.kind === 'general' ? 'private/general' : sel?.kind === 'conv' && project ? `${project}/${sel.id}` : null;
  useEffect(() => {
    if (readKey && selConv && read[readKey] !== selConv.messages.length) setRead((r) => ({ ...r, [readKey]: selConv.messages.length }));
  }, [readKey, selConv?.messages.length]);
  useEffect(() => save(READ_KEY, read), [read]);

  if (error) return <div class="work-empty">Work needs you signed in: {error}</div>;
  if (!me) return <div class="work-empty">Loading…</div>;

  const unread = (key: string, c: Conversation) => c.messages.length > (read[key] ?? 0);
  const humans = Object.values(proj.model.conversations).filter((c) => c.kind === 'human').sort((a, b) => a.createdAt - b.createdAt);
  const agents = Object.values(proj.model.agents).sort((a, b) => a.firstSeen - b.firstSeen || a.id.localeCompare(b.id));
  const general = priv.model.conversations.general ?? null;

  return (
    <div class="work" data-testid="work">
      <div class="work-bar">
        <label>
          Project{' '}
          <select
            data-testid="work-project"
            value={project ?? ''}
            onChange={(e) => {
              const v = (e.target as HTMLSelectElement).value;
              setProject(v);
              save(PROJECT_KEY, v);
              if (sel?.kind === 'conv') setSel(null);
            }}
          >
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        <span class="work-role" data-testid="work-role">
          {role ?? 'no access'}
        </span>
        <ul class="presence" data-testid="presence" aria-label="Here now">
          {live.people.map((p) => (
            <li key={p.uid} title={`${p.name} is here`} data-uid={p.uid}>
              {p.name}
            </li>
          ))}
        </ul>
        <span class="work-me">you are {me.name}</span>
        <ConnBadge conn={live.closed ? 'closed' : proj.conn} />
      </div>
      {live.closed && (
        <p class="work-banner" data-testid="work-revoked" role="alert">
          You no longer have access to this project.
        </p>
      )}
      <div class="work-main">
        <nav class="rail" data-testid="work-rail" aria-label="Chats">
          <h2>Private</h2>
          <button class={`rail-item ${sel?.kind === 'general' ? 'on' : ''}`} data-testid="chat-general" onClick={() => setSel({ kind: 'general' })}>
            General Chat
            {general && unread('private/general', general) && sel?.kind !== 'general' && <span class="unread" data-testid="unread" aria-label="unread" />}
          </button>
          {!project && <p class="muted small">You are in no project yet. General Chat is yours already.</p>}
          <h2>
            Conversations
            {project && canWrite && !live.closed && <NewConversation project={project} onMade={(id) => setSel({ kind: 'conv', id })} />}
          </h2>
          {humans.map((c) => (
            <button key={c.id} class={`rail-item ${sel?.kind === 'conv' && sel.id === c.id ? 'on' : ''}`} data-testid={`chat-${c.id}`} data-chat-title={c.title} onClick={() => setSel({ kind: 'conv', id: c.id })}>
              # {c.title}
              {unread(`${project}/${c.id}`, c) && !(sel?.kind === 'conv' && sel.id === c.id) && <span class="unread" data-testid="unread" aria-label="unread" />}
            </button>
          ))}
          <h2>Agents</h2>
          {agents.length === 0 && <p class="muted small">No agent yet. Run roost space on your machine and contribute it here.</p>}
          {agents.map((a) => {
            const c = proj.model.conversations[a.conversation];
            const on = sel?.kind === 'conv' && sel.id === a.conversation;
            return (
              <button key={a.id} class={`rail-item agent st-${a.state} ${on ? 'on' : ''}`} data-testid={`agent-${a.id}`} data-agent-label={a.label} data-state={a.state} onClick={() => setSel({ kind: 'conv', id: a.conversation })}>
                <span class="st-dot" aria-hidden="true" />
                <span class="rail-label">{a.label}</span>
                <span class="tag">{a.state}</span>
                {a.trustedLocal && <span class="tag local">trusted local</span>}
                {a.queue.length > 0 && <span class="tag q">{a.queue.length} queued</span>}
                {c && unread(`${project}/${c.id}`, c) && !on && <span class="unread" data-testid="unread" aria-label="unread" />}
              </button>
            );
          })}
          {project && <SpacesBox project={project} model={proj.model} me={me.uid} role={role} tick={live.spacesTick} />}
        </nav>
        <section class="transcript-pane" aria-label="Transcript">
          {!selConv && <div class="work-empty">Pick a chat on the left.</div>}
          {selConv && (
            <Transcript
              conv={selConv}
              model={sel?.kind === 'general' ? priv.model : proj.model}
              general={sel?.kind === 'general'}
              me={me.uid}
              project={project}
              projectName={projects.find((p) => p.id === project)?.name ?? project ?? ''}
              canLink={canWrite}
              onOpen={(id) => setSel({ kind: 'conv', id })}
            />
          )}
          {selConv && (
            <Composer
              key={`${project}/${selConv.id}`}
              conv={selConv}
              agent={selAgent}
              project={project}
              general={sel?.kind === 'general'}
              canWrite={canWrite && !live.closed}
              role={role}
              me={me.uid}
              model={proj.model}
            />
          )}
        </section>
        {selAgent && (
          <AgentPanel
            agent={selAgent}
            model={proj.model}
            terminal={live.terminal}
            canWrite={canWrite}
            project={project!}
            // My role in another project (an approval waits on that project's board); this project's is live.
            roleIn={(p) => (p === project ? role : (projects.find((x) => x.id === p)?.role ?? null))}
            projectName={(p) => projects.find((x) => x.id === p)?.name ?? p}
          />
        )}
      </div>
    </div>
  );
}

function NewConversation({ project, onMade }: { project: string; onMade: (id: string) => void }) {
  return (
    <button
      class="mini"
      data-testid="new-conversation"
      title="New conversation"
      onClick={async () => {
        const title = prompt('Conversation title');
        if (!title) return;
        const r = await post('/api/v2/conversations', { project, title });
        if (r.ok) onMade(r.json.id);
      }}
    >
      +
    </button>
  );
}

function Transcript(props: { conv: Conversation; model: WorkModel; general: boolean; me: string; project: string | null; projectName: string; canLink: boolean; onOpen: (id: string) => void }) {
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
            <span class="text">{m.text}</span>
            {m.command && m.kind === 'prompt' && <CommandMark id={m.command} model={props.model} />}
            {props.general && m.kind === 'human' && m.by.uid === props.me && props.project && props.canLink && (
              <button
                class="linkish"
                data-testid={`start-work-${m.seq}`}
                onClick={async () => {
                  const r = await post('/api/v2/general/link', { project: props.project, message: m.seq });
                  setNote(r.ok ? `Started in ${props.projectName}` : r.json?.message ?? 'failed');
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

/** Drafts per chat, for this tab: switching chats keeps what was typed. */
const drafts = new Map<string, string>();

function Composer(props: { conv: Conversation; agent: Agent | null; project: string | null; general: boolean; canWrite: boolean; role: string | null; me: string; model: WorkModel }) {
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
      ? await post('/api/v2/commands', { project: props.project, agent: agent.id, text: t })
      : props.general
        ? await post('/api/v2/conversations/general/messages', { text: t })
        : await post(`/api/v2/conversations/${encodeURIComponent(conv.id)}/messages`, { project: props.project, text: t });
    if (r.ok) setText('');
    else setErr(r.json?.message ?? `failed (${r.status})`);
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

function AgentPanel(props: { agent: Agent; model: WorkModel; terminal: string; canWrite: boolean; project: string; roleIn: (project: string) => string | null; projectName: (project: string) => string }) {
  const { agent, model, terminal, canWrite, project } = props;
  const x = agent.running ? model.executions[agent.running] : null;
  const running = x ? model.commands[x.command] : null;
  const results = useMemo(() => Object.values(model.results).filter((r) => r.agent === agent.id).sort((a, b) => b.rev - a.rev), [model.results, agent.id]);
  const space = model.spaces[agent.space];
  return (
    <aside class="agent-panel" data-testid="agent-panel" aria-label="Agent">
      <h2>{agent.label}</h2>
      <dl>
        <dt>State</dt>
        <dd data-testid="agent-state" data-state={agent.state}>
          {agent.state}
          {x?.state === 'blocked' && <span data-testid="agent-blocked"> on {x.blockedOn}</span>}
        </dd>
        <dt>Mode</dt>
        <dd data-testid="agent-mode">
          {agent.mode || 'default'}
          {agent.trustedLocal ? ' · trusted local' : ' · bridge'}
          {agent.trustedLocal && (agent.callable ? ' · callable' : ' · read-only to teammates')}
        </dd>
        <dt>Space</dt>
        <dd>
          {space?.name ?? agent.space}
          {space && !space.contributed && ' (revoked)'}
        </dd>
        <dt>Pane</dt>
        <dd data-testid="agent-pane">{agent.pane || '—'}</dd>
      </dl>
      {x?.state === 'blocked' && x.approval && <ApprovalBox x={x} approval={x.approval} role={props.roleIn(x.approval.project)} projectName={props.projectName(x.approval.project)} />}
      <h3>Running</h3>
      <p data-testid="running">{running ? running.text : <span class="muted">nothing</span>}</p>
      <h3>Queue</h3>
      <ol class="queue" data-testid="queue">
        {agent.queue.map((id) => {
          const c = model.commands[id];
          return (
            <li key={id} data-command={id}>
              <span class="q-text">{c?.text ?? id}</span> <span class="muted small">by {c?.by.name}</span>
              {canWrite && (
                <button class="linkish" onClick={() => void post(`/api/v2/commands/${id}/cancel?project=${encodeURIComponent(project)}`, {})}>
                  cancel
                </button>
              )}
            </li>
          );
        })}
        {agent.queue.length === 0 && <li class="muted">empty</li>}
      </ol>
      <h3>Result</h3>
      <p data-testid="result" data-status={results[0]?.status ?? ''}>
        {results[0] ? results[0].text : <span class="muted">none yet</span>}
      </p>
      <h3>Terminal</h3>
      <pre class="terminal" data-testid="terminal">
        {agent.state === 'ended' ? '(ended)' : terminal || '(no output yet)'}
      </pre>
    </aside>
  );
}

/**
 * The approval a blocked execution waits for. It lives on the fleet board
 * (the bridge posted it pending on its thread); Allow / Deny here is the
 * board's own decision post (`decide`, as on the board's card and in the
 * approvals inbox), so the first decision anywhere wins and the server checks
 * the role. Nothing changes here until the bridge reports the execution
 * resumed: the box goes away for everyone at once. Viewers see it read-only.
 *
 * What it shows is the request as the board holds it, read from the board:
 * the server checked the pointer against the board when it took the report,
 * but a pointer stored before that check was the Space's word. Whoever may
 * decide can read the board, so the buttons appear only beside the board's
 * own tool and digest, and only while the board has it pending. Someone who
 * cannot read the board sees the pointer (read-only anyway).
 */
function ApprovalBox({ x, approval: a, role, projectName }: { x: Execution; approval: PendingApproval; role: string | null; projectName: string }) {
  const [sent, setSent] = useState<string | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const [held, setHeld] = useState<{ rid: string; req: BoardRequest } | null>(null);
  useEffect(() => {
    let live = true;
    void boardRequest(a).then((req) => live && setHeld({ rid: a.rid, req }));
    return () => {
      live = false;
    };
  }, [a.project, a.thread, a.session, a.rid]);
  const req = held?.rid === a.rid ? held.req : null;
  // Before the board answers there is nothing to show a decider; after, the board's copy or, for whoever cannot read the board, the pointer.
  const ask = req?.kind === 'held' ? req : req?.kind === 'unreadable' ? a : null;
  const pending = req?.kind === 'held' && req.state === 'pending';
  const canDecide = (role === 'owner' || role === 'editor') && pending;
  const answer = async (allow: boolean) => {
    setSent(a.rid);
    setErr(null);
    const r = await decide(a.thread, a.session, a.rid, allow, a.project);
    if (!r.ok) {
      setErr(r.message);
      setSent(null);
    }
  };
  const busy = sent === a.rid;
  return (
    <section class="work-approval" data-testid="work-approval" data-rid={a.rid} data-execution={x.id} aria-label="Needs approval">
      <h3>Needs approval</h3>
      {ask ? (
        <p class="ask" data-source={req?.kind === 'held' ? 'board' : 'pointer'}>
          <code class="tool" data-testid="approval-tool">
            {ask.tool}
          </code>{' '}
          <span class="digest" data-testid="approval-digest">
            {ask.digest}
          </span>
        </p>
      ) : (
        <p class="ask muted" data-testid="approval-loading">
          {req?.kind === 'gone' ? `The fleet board #${a.thread} does not hold this request (any more): nothing to decide here.` : 'Reading the request from the fleet board…'}
        </p>
      )}
      {req?.kind === 'held' && req.state !== 'pending' && (
        <p class="small" data-testid="approval-settled">
          Already {req.state}
          {req.by ? ` by ${req.by}` : ''} on the board; the agent goes on once its bridge hears it.
        </p>
      )}
      <p class="muted small" data-testid="approval-who">
        Editors and owners of {projectName} decide, here or on the fleet board #{a.thread}; the first decision wins, and no decision in time is a no.
      </p>
      {canDecide ? (
        <div class="answer">
          <button class="allow" data-testid="approval-allow" disabled={busy} onClick={() => void answer(true)} aria-label={`Allow ${ask?.tool ?? ''}`}>
            Allow
          </button>
          <button class="deny" data-testid="approval-deny" disabled={busy} onClick={() => void answer(false)} aria-label={`Deny ${ask?.tool ?? ''}`}>
            Deny
          </button>
        </div>
      ) : role === 'owner' || role === 'editor' ? (
        req?.kind === 'unreadable' && (
          <p class="small" data-testid="approval-unreadable">
            The fleet board cannot be read now{req.status ? ` (${req.status})` : ''}: decide on the board #{a.thread}.
          </p>
        )
      ) : (
        <p class="small" data-testid="approval-readonly">
          {role === 'viewer' ? `You are a viewer of ${projectName}: you can see this request, not decide it.` : `You are not a member of ${projectName}: you cannot decide this request.`}
        </p>
      )}
      {err && (
        <p class="error" role="alert" data-testid="approval-error">
          {err}
        </p>
      )}
    </section>
  );
}

/**
 * Spaces: my workstations (registered by `roost bridge`) and the ones
 * contributed to this project. Only a Space's owner contributes it; its owner
 * or a project owner revokes it (future execution stops; chats stay).
 */
function SpacesBox({ project, model, me, role, tick }: { project: string; model: WorkModel; me: string; role: string | null; tick: number }) {
  const [mine, setMine] = useState<{ id: string; name: string }[]>([]);
  const [err, setErr] = useState<string | null>(null);
  const contributedRevs = Object.values(model.spaces)
    .map((s) => s.rev)
    .join(',');
  useEffect(() => {
    fetch('/api/v2/spaces').then(async (r) => r.ok && setMine((await r.json()).spaces));
  }, [project, contributedRevs, tick]);
  const rows = new Map<string, { id: string; name: string; owner: string; ownerUid: string; contributed: boolean }>();
  for (const s of Object.values(model.spaces)) rows.set(s.id, { id: s.id, name: s.name, owner: s.owner.name, ownerUid: s.owner.uid, contributed: s.contributed });
  for (const s of mine) if (!rows.has(s.id)) rows.set(s.id, { id: s.id, name: s.name, owner: 'you', ownerUid: me, contributed: false });
  const canWrite = role === 'owner' || role === 'editor';
  const act = async (path: string, body: unknown) => {
    setErr(null);
    const r = await post(path, body);
    if (!r.ok) setErr(r.json?.message ?? `failed (${r.status})`);
  };
  return (
    <div class="spaces" data-testid="spaces">
      <h2>Spaces</h2>
      {rows.size === 0 && <p class="muted small">Run roost space on your machine to add your Space.</p>}
      {[...rows.values()].map((s) => (
        <div class="space-row" key={s.id} data-testid={`space-${s.id}`} data-contributed={String(s.contributed)}>
          <span class="rail-label">
            {s.name} <span class="muted small">({s.ownerUid === me ? 'yours' : s.owner})</span>
          </span>
          {s.contributed ? <span class="tag">contributed</span> : <span class="tag">not contributed</span>}
          {!s.contributed && s.ownerUid === me && canWrite && (
            <button class="mini" data-testid={`contribute-${s.id}`} onClick={() => act(`/api/v2/projects/${encodeURIComponent(project)}/spaces`, { space: s.id })}>
              Contribute
            </button>
          )}
          {s.contributed && (s.ownerUid === me || role === 'owner') && (
            <button class="mini" data-testid={`revoke-${s.id}`} onClick={() => act(`/api/v2/projects/${encodeURIComponent(project)}/spaces/${encodeURIComponent(s.id)}/revoke`, {})}>
              Revoke
            </button>
          )}
        </div>
      ))}
      {err && <p class="error">{err}</p>}
    </div>
  );
}
