// The Roost web app: one shell, one nav, one view per route. The floor is the
// first view; the others are named here so the nav and the URLs are stable.
// The shell is the entry chunk; each view is loaded when it is first shown
// (views.ts, docs/web.md "What loads when").

// Global styles first: each view's own stylesheet (imported by the view) comes after them.
import './app.css';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { OutageBanner } from './shared/OutageBanner.js';
import { followLink, navigate } from './shared/navigate.js';
import { inProject, pageProject } from './shared/scope.js';
import { useWaiting } from './shared/waiting.js';
import { PAGES, pageOf, type Page } from './pages.js';
import { chime, registerWorker, soundOn } from './shared/push.js';
import { loadView, viewOf, warmView, whenIdle } from './views.js';
import { decisionOfPath, firstLook } from './shared/approvals/first.js';
import { liveHub } from './live/hub.js';
import { SearchBox } from './search/SearchBox.js';

/**
 * The page's view, once its chunk is in. Until then the shell stays as it is
 * (the nav already names the page) and the view's place says it is loading,
 * after a moment only (app.css: a load that takes less shows nothing); a
 * chunk that cannot be had says so, with a reload (a new build may have
 * replaced it).
 */
function Routed(props: { path: Page['path'] }) {
  const View = viewOf(props.path);
  const [failed, setFailed] = useState(false);
  const [, setTick] = useState(0);
  useEffect(() => {
    if (View) return;
    let on = true;
    loadView(props.path).then(
      () => on && setTick((n) => n + 1),
      (e: unknown) => {
        console.warn('roost: a view could not be loaded', e);
        if (on) setFailed(true);
      },
    );
    return () => {
      on = false;
    };
  }, [props.path, View]);
  if (View) return <View />;
  return failed ? (
    <p class="view-failed" role="alert">
      This view could not be loaded (Roost may have been updated, or it cannot be reached).{' '}
      <button type="button" onClick={() => location.reload()}>
        Reload
      </button>
    </p>
  ) : (
    <p class="view-loading" role="status" data-testid="view-loading">
      Loading…
    </p>
  );
}

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
              href={inProject(r.path, project)}
              aria-current={r === route ? 'page' : undefined}
              onClick={followLink(inProject(r.path, project))}
              onPointerEnter={() => warmView(r.path)}
              onFocus={() => warmView(r.path)}
            >
              {r.label}
              {r.path === '/inbox' && <PendingBadge />}
            </a>
          ))}
        </nav>
        <SearchBox project={project} />
      </header>
      <OutageBanner />
      <main id="main" key={`${route.path} ${project}`}>
        <Routed path={route.path} />
      </main>
    </div>
  );
}

// The first paint is the shell with its view, not the shell with a loading
// line and then the view: the view's chunk and, for a notification's decision,
// the server's answer for it (shared/approvals/first.ts) are asked for at
// once, and the page is drawn when both are in, or after FIRST_PAINT_WAIT_MS
// whatever came (a slow network then shows the shell and the loading line
// first). The live connection is set up meanwhile (the hub's leader waits a
// moment for the other tabs before it opens).
const FIRST_PAINT_WAIT_MS = 400;
const decision = decisionOfPath(location.pathname);
const needs: Promise<unknown>[] = [loadView(pageOf(location.pathname).path)];
if (decision) needs.push(firstLook(decision, pageProject()).promise);
liveHub();
void Promise.race([Promise.allSettled(needs), new Promise((r) => setTimeout(r, FIRST_PAINT_WAIT_MS))]).then(() => render(<App />, document.getElementById('app')!));
// The approvals inbox, once the page is idle: a notification's click opens a
// decision in this tab, and then nothing is left to fetch or compile.
whenIdle(() => warmView('/inbox'));
// The service worker: notifications, and Roost as an installable app (docs/web.md).
void registerWorker();
