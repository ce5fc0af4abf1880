// Work: a project's conversations and its agents' chats, one transcript with a
// role-aware composer, the selected agent's queue, execution, result and
// live terminal; General Chat beside, private, outside the project switcher.
//
// The project is the page's (`?project=`), chosen with the switcher the floor
// and the inbox show (shared/ProjectSwitcher.tsx): a change of project
// remounts the view. A page naming no project shows the default one, or,
// for a person who is not in it, their first project (the URL says which).
//
// Per person, never shared: the selected chat, drafts, and what was read. A
// new agent appearing changes the rail, never the selection.

import { useEffect, useState } from 'preact/hooks';
import type { Agent, Conversation } from '../../../src/core/work.js';
import { useWork } from '../live/work.js';
import { navigate } from '../shared/navigate.js';
import { useWho } from '../shared/projects.js';
import { pageProject, projectOfPage, withProject } from '../shared/scope.js';
import { AgentPanel } from './components/AgentPanel.js';
import { Composer } from './components/Composer.js';
import { Rail, type Selection } from './components/Rail.js';
import { Transcript } from './components/Transcript.js';
import { WorkBar } from './components/WorkBar.js';
import { useReadMarks } from './useReadMarks.js';
import './work.css';

/** General Chat before its first message: empty, ready to write in. */
const EMPTY_GENERAL: Conversation = { id: 'general', kind: 'general', title: 'General Chat', createdBy: { uid: '', name: '' }, createdAt: 0, messages: [], links: [], rev: 0 };

export function WorkView() {
  const who = useWho();
  const projects = who.projects;
  const named = projectOfPage();
  // No project named and none of mine is the default one: my first (moved to below, so the switcher names it).
  const fallback = !named && who.mode !== 'unknown' && !projects.some((p) => p.id === 'default') ? (projects[0]?.id ?? null) : null;
  const project = who.mode === 'unknown' ? null : named || fallback || (projects.length ? pageProject() : null);
  useEffect(() => {
    if (fallback && !named) navigate(withProject(fallback), true);
  }, [fallback, named]);
  // A search result opens one conversation: `?conversation=<id>` (web/src/search/SearchBox.tsx).
  const [sel, setSel] = useState<Selection>(() => {
    const c = new URLSearchParams(location.search).get('conversation');
    return c && c.length <= 128 ? { kind: 'conv', id: c } : null;
  });
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
  const readKey = sel?.kind === 'general' ? 'private/general' : sel?.kind === 'conv' && project ? `${project}/${sel.id}` : null;
  const unread = useReadMarks(project, proj.model, readKey, selConv);

  const me = { uid: who.uid, name: who.name };
  if (who.error) return <div class="work-empty">Work needs you signed in: {who.error}</div>;
  if (who.mode === 'unknown') return <div class="work-empty">Loading…</div>;

  return (
    <div class="work" data-testid="work">
      <WorkBar project={project} role={role} live={live} me={me.name} />
      {live.closed && (
        <p class="work-banner" data-testid="work-revoked" role="alert">
          You no longer have access to this project.
        </p>
      )}
      <div class="work-main">
        <Rail
          project={project}
          model={proj.model}
          general={priv.model.conversations.general ?? null}
          sel={sel}
          onSelect={setSel}
          unread={unread}
          canCreate={canWrite && !live.closed}
          me={me.uid}
          role={role}
          spacesTick={live.spacesTick}
        />
        <section class="transcript-pane" aria-label="Transcript">
          {!selConv && <div class="work-empty">Pick a chat on the left.</div>}
          {selConv && (
            <Transcript
              conv={selConv}
              model={sel?.kind === 'general' ? priv.model : proj.model}
              projectModel={proj.model}
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
