// Which project and which fleet thread the page is about. The project rides
// every request as `?project=` (an EventSource cannot carry a header); the
// default project is the empty string.

import { SESSION_ID_PATTERN } from '../../../src/core/fleet.js';
import { loadPref, savePref } from './prefs.js';

/** The project of the page (`?project=` in its URL, shared mode); '' (the default one) when absent. */
export function projectOfPage(): string {
  const p = new URLSearchParams(location.search).get('project') ?? '';
  return /^[A-Za-z0-9_-]{1,64}$/.test(p) ? p : '';
}

/** The project the page's live scopes name (`floor:<project>`, `approvals:<project>`, ...): `default` when the page names none. */
export function pageProject(): string {
  return projectOfPage() || 'default';
}

/** The page's path in another project (`?project=` replaced; none for the default one), keeping the rest of its query. */
export function withProject(project: string): string {
  const q = new URLSearchParams(location.search);
  if (project && project !== 'default') q.set('project', project);
  else q.delete('project');
  const s = q.toString();
  return location.pathname + (s ? '?' + s : '') + location.hash;
}

/** `path` in `project` (default: the page's): `?project=` appended when it is not the default one ('' or `default`). */
export function inProject(path: string, project = projectOfPage()): string {
  return project && project !== 'default' ? `${path}${path.includes('?') ? '&' : '?'}project=${encodeURIComponent(project)}` : path;
}

/** A fleet thread's name: the id pattern of the fleet fold (the server checks the same). */
export function isThread(t: string): boolean {
  return SESSION_ID_PATTERN.test(t);
}

/** The fleet board of `thread` in the API (`/fleet/:thread`), plus `suffix` (`/requests`). */
export function fleetPath(thread: string, suffix = ''): string {
  return `/fleet/${encodeURIComponent(thread)}${suffix}`;
}

const THREAD_KEY = 'roost.fleet.thread';
export const DEFAULT_THREAD = 'default';

/** The thread a member looked at last (the fleet view and the approvals inbox follow it). */
export function lastThread(): string {
  return loadPref(THREAD_KEY) || DEFAULT_THREAD;
}

export function rememberThread(t: string): void {
  savePref(THREAD_KEY, t);
}
