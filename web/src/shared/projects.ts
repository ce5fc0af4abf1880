// Who this browser is and the projects it may see (`GET /auth/me`), read once
// per tab and shared by every component that names a project (the project
// switcher, the projects page); read again after a change this tab made
// (a project created, a role changed).

import { useEffect, useState } from 'preact/hooks';
import { getJson } from './api.js';

export type Role = 'owner' | 'editor' | 'viewer';

export interface ProjectRow {
  id: string;
  name: string;
  role: Role;
}

export interface Who {
  /** `unknown` until the server answered (or when it cannot say: signed out). */
  mode: 'local' | 'shared' | 'unknown';
  uid: string;
  name: string;
  /** A server administrator (local mode: the owner) may make accounts and invites outside any project. */
  admin: boolean;
  /** A person (not a token): may create projects. */
  person: boolean;
  projects: ProjectRow[];
  /** Why the server could not say, or ''. */
  error: string;
}

const UNKNOWN: Who = { mode: 'unknown', uid: '', name: '', admin: false, person: false, projects: [], error: '' };

let who: Who = UNKNOWN;
let asked: Promise<void> | null = null;
const listeners = new Set<(w: Who) => void>();

interface MeBody {
  mode?: string;
  kind?: string;
  user?: { uid?: string; name?: string; admin?: boolean };
  projects?: ProjectRow[];
}

/** Asks the server again (after this tab changed something); every listener hears the answer. */
export function reloadProjects(): Promise<void> {
  asked = getJson<MeBody>('/auth/me').then((r) => {
    if (!r.ok) who = { ...UNKNOWN, error: r.message };
    else {
      const b = r.body ?? {};
      who = {
        mode: b.mode === 'shared' ? 'shared' : 'local',
        uid: b.user?.uid ?? '',
        name: b.user?.name ?? '',
        admin: b.user?.admin === true,
        person: b.kind === 'local' || b.kind === 'person',
        projects: Array.isArray(b.projects) ? b.projects : [],
        error: '',
      };
    }
    for (const f of listeners) f(who);
  });
  return asked;
}

/** Who this browser is and its projects; the component re-renders when that is read again. */
export function useWho(): Who {
  const [w, set] = useState(who);
  useEffect(() => {
    listeners.add(set);
    if (!asked) void reloadProjects();
    else set(who);
    return () => void listeners.delete(set);
  }, []);
  return w;
}
