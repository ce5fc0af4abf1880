// The Roost web app: one shell, one nav, one view per route. The floor is the
// first view; the others are named here so the nav and the URLs are stable.

// Global styles first: each view's own stylesheet (imported by the view) comes after them.
import './app.css';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { FloorView } from './floor/FloorView.js';
import { FleetView } from './fleet/FleetView.js';
import { InboxView } from './approvals/InboxView.js';
import { WorkView } from './work/WorkView.js';
import { CostView } from './cost/CostView.js';
import { FlockView } from './flock/FlockView.js';
import { ProjectsView } from './projects/ProjectsView.js';
import { OutageBanner } from './shared/OutageBanner.js';
import { followLink, navigate } from './shared/navigate.js';
import { inProject, pageProject } from './shared/scope.js';
import { useWaiting } from './shared/waiting.js';
import { PAGES, pageOf, type Page } from './pages.js';
import { chime, registerWorker, soundOn } from './shared/push.js';

/** Each page's view. */
const VIEWS: Record<Page['path'], () => preact.JSX.Element> = {
  '/': () => <FloorView />,
  '/fleet': () => <FleetView />,
  '/work': () => <WorkView />,
  '/flock': () => <FlockView />,
  '/inbox': () => <InboxView />,
  '/cost': () => <CostView />,
  '/manage': () => <ProjectsView />,
};

/** What waits for a decision in the page's project, on the nav link: the list the floor and the inbox count too. */
function PendingBadge() {
  const n = useWaiting().list.length;
  return n > 0 ? (
    <span class="nav-badge" data-testid="nav-pending" aria-label={`${n} waiting`}>
      {n}
    </span>
  ) : null;
}

function App() {
  const [path, setPath] = useState(location.pathname);
  // The page's project (`?project=`): a view is remounted when it changes, so its live scopes follow.
  const [project, setProject] = useState(pageProject);
  useEffect(() => {
    const on = () => {
      setPath(location.pathname);
      setProject(pageProject());
    };
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  const route = pageOf(path);
  // The tab's title carries how many decisions wait: the one waiting list the nav badge, the floor and the inbox count.
  const { list, client } = useWaiting(project);
  const waiting = list.length;
  useEffect(() => {
    document.title = (waiting > 0 ? `(${waiting}) ` : '') + (route.path === '/' ? 'Roost · Floor' : `Roost · ${route.label}`);
  }, [route, waiting]);
  // The optional sound: once per rise of the count, never for what waited when the page opened.
  const live = client.connection === 'live';
  const before = useRef<number | null>(null);
  useEffect(() => {
    if (!live) return;
    if (before.current !== null && waiting > before.current && soundOn()) chime();
    before.current = waiting;
  }, [waiting, live]);
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/" onClick={(e) => (e.preventDefault(), navigate('/'))}>
          <span class="logo" aria-hidden="true" />
          Roost
        </a>
        <nav aria-label="Views">
          {/* Every link stays in the page's project (the badge counts that project's approvals). */}
          {PAGES.filter((r) => !('hidden' in r)).map((r) => (
            <a
              key={r.path}
              href={inProject(r.path, project === 'default' ? '' : project)}
              aria-current={r === route ? 'page' : undefined}
              onClick={followLink(inProject(r.path, project === 'default' ? '' : project))}
            >
              {r.label}
              {r.path === '/inbox' && <PendingBadge />}
            </a>
          ))}
        </nav>
      </header>
      <OutageBanner />
      <main id="main" key={`${route.path} ${project}`}>
        {VIEWS[route.path]()}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
// The service worker: notifications, and Roost as an installable app (docs/web.md).
void registerWorker();
