// The Roost web app: one shell, one nav, one view per route. The floor is the
// first view; the others are named here so the nav and the URLs are stable.

import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { FloorView } from './floor/FloorView.js';
import { InboxView, usePendingCount } from './approvals/InboxView.js';
import { BoardView } from './board/BoardView.js';
import { useSessionPendingCount } from './board/SessionApprovals.js';
import { WorkView } from './work/WorkView.js';
import './styles.css';

interface Route {
  path: string;
  label: string;
  view: () => preact.JSX.Element;
}

function Soon(props: { what: string; issue: string }) {
  return (
    <div class="soon">
      <h1>{props.what}</h1>
      <p>Not built yet ({props.issue}). The floor is live.</p>
    </div>
  );
}

const ROUTES: Route[] = [
  { path: '/', label: 'Floor', view: () => <FloorView /> },
  { path: '/fleet', label: 'Fleet', view: () => <BoardView /> },
  { path: '/work', label: 'Work', view: () => <WorkView /> },
  { path: '/flock', label: 'Flock', view: () => <Soon what="Flock" issue="a later issue" /> },
  { path: '/inbox', label: 'Approvals', view: () => <InboxView /> },
];

/** How many approvals wait, on the nav link (live: hook approvals, and the fleet board's of the thread looked at last). */
function PendingBadge() {
  const n = usePendingCount() + useSessionPendingCount();
  return n > 0 ? (
    <span class="nav-badge" data-testid="nav-pending" aria-label={`${n} waiting`}>
      {n}
    </span>
  ) : null;
}

function routeOf(pathname: string): Route {
  if (pathname === '/floor') return ROUTES[0];
  return ROUTES.find((r) => r.path !== '/' && (pathname === r.path || pathname.startsWith(r.path + '/'))) ?? ROUTES[0];
}

/** Client-side navigation: the server answers every app route with index.html. */
export function navigate(path: string): void {
  history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

function App() {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const on = () => setPath(location.pathname);
    addEventListener('popstate', on);
    return () => removeEventListener('popstate', on);
  }, []);
  const route = routeOf(path);
  useEffect(() => {
    document.title = route.path === '/' ? 'Roost · Floor' : `Roost · ${route.label}`;
  }, [route]);
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
          {ROUTES.map((r) => (
            <a
              key={r.path}
              href={r.path}
              aria-current={r === route ? 'page' : undefined}
              onClick={(e) => {
                if (e.metaKey || e.ctrlKey || e.shiftKey) return;
                e.preventDefault();
                navigate(r.path);
              }}
            >
              {r.label}
              {r.path === '/inbox' && <PendingBadge />}
            </a>
          ))}
        </nav>
      </header>
      <main id="main">{route.view()}</main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
