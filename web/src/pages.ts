// The app's pages: the nav's entries, in order. The shell (main.tsx) shows one
// view per page; the dev server (vite.config.ts) answers a browser loading
// one of these paths with the app, as the Roost server does. A page's path
// also covers its sub-paths (`/fleet/<thread>`); `/floor` is the floor too.

export const PAGES = [
  { path: '/', label: 'Floor' },
  { path: '/fleet', label: 'Fleet' },
  { path: '/work', label: 'Work' },
  { path: '/flock', label: 'Flock' },
  { path: '/inbox', label: 'Approvals' },
  { path: '/cost', label: 'Cost' },
  // Projects and their members (not `/projects`: that is the API's list). Reached from every project switcher, not the nav.
  { path: '/manage', label: 'Projects', hidden: true },
] as const;

export type Page = (typeof PAGES)[number];

/** The page a path shows (the floor for a path that is no page's). */
export function pageOf(pathname: string): Page {
  if (pathname === '/floor') return PAGES[0];
  return PAGES.find((p) => p.path !== '/' && (pathname === p.path || pathname.startsWith(p.path + '/'))) ?? PAGES[0];
}

/** Whether `pathname` is one of the app's pages (not an API path that falls back to the floor). */
export function isPage(pathname: string): boolean {
  return pathname === '/' || pathname === '/floor' || pageOf(pathname) !== PAGES[0];
}
