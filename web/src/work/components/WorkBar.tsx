import type { WorkLive } from '../../live/work.js';
import { ConnectionBadge } from '../../shared/ConnectionBadge.js';
import { ProjectSwitcher } from '../../shared/ProjectSwitcher.js';

/** The project switcher (the one the floor and the inbox show), my role in it, who is here now, who I am, and the stream's state. */
export function WorkBar(props: { project: string | null; role: string | null; live: WorkLive; me: string }) {
  const { live } = props;
  return (
    <div class="work-bar">
      {props.project !== null && <ProjectSwitcher testid="work-project" />}
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
