import type { WorkLive } from '../../live/work.js';
import { ConnectionBadge } from '../../shared/ConnectionBadge.js';
import type { ProjectRow } from '../useProjects.js';

/** The project picker, my role in it, who is here now, who I am, and the stream's state. */
export function WorkBar(props: { projects: ProjectRow[]; project: string | null; onProject: (id: string) => void; role: string | null; live: WorkLive; me: string }) {
  const { live } = props;
  return (
    <div class="work-bar">
      <label>
        Project{' '}
        <select data-testid="work-project" value={props.project ?? ''} onChange={(e) => props.onProject((e.target as HTMLSelectElement).value)}>
          {props.projects.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <span class="work-role" data-testid="work-role">
        {props.role ?? 'no access'}
      </span>
      <ul class="presence" data-testid="presence" aria-label="Here now">
        {live.people.map((p) => (
          <li key={p.uid} title={`${p.name} is here`} data-uid={p.uid}>
            {p.name}
          </li>
        ))}
      </ul>
      <span class="work-me">you are {props.me}</span>
      <ConnectionBadge state={live.closed ? 'closed' : live.conn} testid="work-conn" />
    </div>
  );
}
