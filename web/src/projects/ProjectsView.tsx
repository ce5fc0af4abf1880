// Projects from the web (`/manage`): the projects this browser may see,
// a new one, and for the page's project (`?project=`) its members, live
// (the scope `members:<project>`: a change made anywhere shows at once):
// invite someone (a link), add an account by its login, change a member's
// role, remove one. What a caller cannot do is not offered (only an owner sees the
// role pickers and the invite form); the server checks every request anyway
// (src/server/identity/routes.ts), and a refusal shows its message.

import { useState } from 'preact/hooks';
import { postJson, sendJson } from '../shared/api.js';
import { useMembers, type Member } from '../live/members.js';
import { followLink, navigate } from '../shared/navigate.js';
import { reloadProjects, useWho, type Role } from '../shared/projects.js';
import { inProject, pageProject } from '../shared/scope.js';
import { Webhooks } from './Webhooks.js';
import './projects.css';

const ROLES: Role[] = ['owner', 'editor', 'viewer'];

function NewProject() {
  const [name, setName] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const create = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    const r = await postJson<{ project: { id: string } }>('/projects', { name: name.trim() });
    setBusy(false);
    if (!r.ok) return setError(r.message);
    setName('');
    await reloadProjects();
    navigate(inProject('/manage', r.body.project.id));
  };
  return (
    <form class="new-project" onSubmit={create} data-testid="new-project">
      <label>
        New project{' '}
        <input value={name} required maxLength={80} placeholder="Name" onInput={(e) => setName((e.target as HTMLInputElement).value)} data-testid="new-project-name" />
      </label>{' '}
      <button type="submit" disabled={busy || !name.trim()} data-testid="new-project-create">
        Create
      </button>
      {error && (
        <p class="error" role="alert" data-testid="new-project-error">
          {error}
        </p>
      )}
    </form>
  );
}

function Invite(props: { project: string }) {
  const [role, setRole] = useState<Role>('viewer');
  const [link, setLink] = useState('');
  const [login, setLogin] = useState('');
  const [error, setError] = useState('');
  const invite = async () => {
    setError('');
    const r = await postJson<{ link: string; expires: number }>('/auth/invites', { project: props.project, role });
    if (!r.ok) return setError(r.message);
    setLink(location.origin + r.body.link);
  };
  const add = async (e: Event) => {
    e.preventDefault();
    setError('');
    const r = await sendJson('PUT', `/projects/${encodeURIComponent(props.project)}/members/${encodeURIComponent(login.trim())}`, { role });
    if (!r.ok) return setError(r.message);
    setLogin('');
  };
  return (
    <section class="invite" aria-labelledby="invite-h" data-testid="invite">
      <h3 id="invite-h">Invite someone</h3>
      <p>
        <label>
          As{' '}
          <select value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value as Role)} data-testid="invite-role">
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>{' '}
        <button type="button" onClick={invite} data-testid="invite-make">
          Make an invite link
        </button>
      </p>
      {link && (
        <p>
          <label>
            Send this link (it works once, for 7 days){' '}
            <input readOnly value={link} size={48} data-testid="invite-link" onFocus={(e) => (e.target as HTMLInputElement).select()} />
          </label>
        </p>
      )}
      <form onSubmit={add}>
        <label>
          Or add an account by its login{' '}
          <input value={login} required maxLength={64} onInput={(e) => setLogin((e.target as HTMLInputElement).value)} data-testid="add-login" />
        </label>{' '}
        <button type="submit" disabled={!login.trim()} data-testid="add-member">
          Add as {role}
        </button>
      </form>
      {error && (
        <p class="error" role="alert" data-testid="invite-error">
          {error}
        </p>
      )}
    </section>
  );
}

function Members(props: { project: string; mine: Role | null; me: string }) {
  const [error, setError] = useState('');
  // A picker whose change was refused shows the role as it is again.
  const [refusals, setRefusals] = useState(0);
  const owner = props.mine === 'owner';
  // The list comes over the live connection: when it opens, and after every change, made here or anywhere else.
  // My own role changed (or I left): what this page offers me, and every switcher, is read again.
  const live = useMembers(props.project, (list) => {
    const now = list.find((m) => m.uid === props.me)?.role ?? null;
    if (now !== props.mine) void reloadProjects();
  });
  const members = live.members;
  const changed = async (p: Promise<{ ok: boolean; message?: string }>) => {
    setError('');
    const r = await p;
    if (!r.ok) {
      setError(r.message ?? 'refused');
      setRefusals((n) => n + 1);
    }
  };
  const setRole = (m: Member, role: Role) => changed(sendJson('PUT', `/projects/${encodeURIComponent(props.project)}/members/${encodeURIComponent(m.uid)}`, { role }));
  const remove = (m: Member) => changed(sendJson('DELETE', `/projects/${encodeURIComponent(props.project)}/members/${encodeURIComponent(m.uid)}`));
  return (
    <section aria-labelledby="members-h" data-testid="members">
      <h3 id="members-h">Members</h3>
      {!owner && <p class="muted">Only an owner of this project can invite people or change roles.</p>}
      {members === null ? (
        <p class="muted">{live.closed || 'Loading…'}</p>
      ) : (
        <table class="members">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Login</th>
              <th scope="col">Role</th>
              {owner && <th scope="col" aria-label="Actions" />}
            </tr>
          </thead>
          <tbody>
            {members.map((m) => (
              <tr key={m.uid} data-testid={`member-${m.login ?? m.uid}`} data-role={m.role ?? ''}>
                <th scope="row">
                  {m.name}
                  {m.uid === props.me ? ' (you)' : ''}
                </th>
                <td>{m.login ?? '—'}</td>
                <td>
                  {owner ? (
                    <select key={refusals} value={m.role ?? ''} aria-label={`Role of ${m.name}`} onChange={(e) => void setRole(m, (e.target as HTMLSelectElement).value as Role)} data-testid="member-role">
                      {ROLES.map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  ) : (
                    <span data-testid="member-role-text">{m.role}</span>
                  )}
                </td>
                {owner && (
                  <td>
                    <button type="button" class="link" onClick={() => void remove(m)} aria-label={`Remove ${m.name} from the project`} data-testid="member-remove">
                      Remove
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {members !== null && error && (
        <p class="error" role="alert" data-testid="members-error">
          {error}
        </p>
      )}
      {owner && <Invite project={props.project} />}
    </section>
  );
}

export function ProjectsView() {
  const who = useWho();
  const current = pageProject();
  const mine = who.projects.find((p) => p.id === current) ?? null;
  return (
    <div class="projects" data-testid="projects">
      <h1>Projects</h1>
      {who.error && (
        <p class="error" role="alert">
          {who.error}
        </p>
      )}
      <ul class="project-list" data-testid="project-list">
        {who.projects.map((p) => (
          <li key={p.id} data-testid={`project-${p.id}`} aria-current={p.id === current ? 'true' : undefined}>
            <a href={inProject('/manage', p.id)} onClick={followLink(inProject('/manage', p.id))}>
              {p.name}
            </a>{' '}
            <code>{p.id}</code> <span class="role">{p.role}</span>{' '}
            <a href={inProject('/', p.id)} onClick={followLink(inProject('/', p.id))}>
              floor
            </a>{' '}
            <a href={inProject('/inbox', p.id)} onClick={followLink(inProject('/inbox', p.id))}>
              approvals
            </a>
          </li>
        ))}
      </ul>
      {who.person && <NewProject />}
      {mine && (
        <section class="project" aria-labelledby="project-h" data-testid="project-detail">
          <h2 id="project-h">
            {mine.name} <span class="role">you are {mine.role === 'viewer' ? 'a viewer' : `an ${mine.role}`}</span>
          </h2>
          {who.mode === 'shared' ? (
            <Members project={current} mine={mine.role} me={who.uid} />
          ) : (
            <p class="muted" data-testid="local-members">
              Local mode: the person at this machine owns every project. Members, roles and invites come with shared mode (<code>roost serve --shared</code>, docs/security.md).
            </p>
          )}
          {mine.role === 'owner' && <Webhooks project={current} local={who.mode === 'local'} />}
        </section>
      )}
    </div>
  );
}
