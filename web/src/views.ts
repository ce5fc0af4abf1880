// Each page's view, loaded when it is first shown (docs/web.md, "What loads
// when"). The shell (main.tsx: the nav, the badge, the outage banner, the one
// live connection) is the entry chunk; every view is its own chunk, with its
// stylesheet, fetched by a dynamic `import()` that Vite splits out. What
// several views use (web/src/shared, web/src/live, the folds of src/core,
// Preact) sits in the shell's chunk or in a chunk the views share, so the
// approvals page of a notification loads the shell and the inbox, never the
// floor's canvas, the charts or Work.
//
// Invariants:
// - one load per view and tab: a second ask gets the same promise; a view
//   once loaded is shown at once (no loading state on a later visit);
// - a failed load (a new build replaced the hashed chunk names, the server
//   went away) is remembered as failed: a browser keeps a failed module
//   import failed, so the page offers a reload rather than a retry.

import type { ComponentType } from 'preact';
import type { Page } from './pages.js';

type Path = Page['path'];

const LOADERS: Record<Path, () => Promise<ComponentType>> = {
  '/': () => import('./floor/FloorView.js').then((m) => m.FloorView),
  '/fleet': () => import('./fleet/FleetView.js').then((m) => m.FleetView),
  '/work': () => import('./work/WorkView.js').then((m) => m.WorkView),
  '/flock': () => import('./flock/FlockView.js').then((m) => m.FlockView),
  '/inbox': () => import('./approvals/InboxView.js').then((m) => m.InboxView),
  '/cost': () => import('./cost/CostView.js').then((m) => m.CostView),
  '/manage': () => import('./projects/ProjectsView.js').then((m) => m.ProjectsView),
};

const loaded = new Map<Path, ComponentType>();
const loading = new Map<Path, Promise<ComponentType>>();

/** The page's view if its chunk is in (else undefined: `loadView` first). */
export function viewOf(path: Path): ComponentType | undefined {
  return loaded.get(path);
}

/** Loads the page's view (once per tab); resolves with it, or rejects when its chunk cannot be had. */
export function loadView(path: Path): Promise<ComponentType> {
  let p = loading.get(path);
  if (!p) {
    p = LOADERS[path]().then((v) => {
      loaded.set(path, v);
      return v;
    });
    loading.set(path, p);
  }
  return p;
}

/** Starts loading a view that is likely next (a link pointed at, the notification's page); failures wait for the real visit. */
export function warmView(path: Path): void {
  loadView(path).catch(() => {});
}

/** Runs `f` once the page is idle (a browser without requestIdleCallback: after a moment). */
export function whenIdle(f: () => void, timeout = 2_000): void {
  if (typeof requestIdleCallback === 'function') requestIdleCallback(() => f(), { timeout });
  else setTimeout(f, 500);
}
