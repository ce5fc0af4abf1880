// The project a view shows, and the way to another: a picker of the
// projects this browser may see. Choosing one moves the page to the same
// view with `?project=` (the shell remounts the view, and its live scopes
// follow); "Projects" opens the page where projects are made and members
// managed.

import { followLink, navigate } from './navigate.js';
import { useWho } from './projects.js';
import { inProject, pageProject, withProject } from './scope.js';

export function ProjectSwitcher(props: { testid: string }) {
  const who = useWho();
  const current = pageProject();
  const rows = who.projects.some((p) => p.id === current) ? who.projects : [{ id: current, name: current, role: null }, ...who.projects];
  return (
    <span class="project-switch">
      <label>
        <span class="sr-only">Project</span>
        <select data-testid={props.testid} value={current} aria-label="Project" onChange={(e) => navigate(withProject((e.target as HTMLSelectElement).value))}>
          {rows.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
              {p.role ? '' : ' (no access)'}
            </option>
          ))}
        </select>
      </label>
      <a href={inProject('/manage', current)} onClick={followLink(inProject('/manage', current))} data-testid={`${props.testid}-manage`}>
        Projects
      </a>
    </span>
  );
}
