import { useEffect, useState } from 'preact/hooks';
import { getJson } from '../shared/api.js';

export interface ProjectRow {
  id: string;
  name: string;
  role: string;
}

export interface Projects {
  me: { uid: string; name: string } | null;
  projects: ProjectRow[];
  /** Why Work cannot be shown (not signed in), or null. */
  error: string | null;
}

/** Who I am and the projects I am a member of (`GET /api/v2/projects`), read once per page. */
export function useProjects(): Projects {
  const [state, set] = useState<Projects>({ me: null, projects: [], error: null });
  useEffect(() => {
    void getJson<{ me: { uid: string; name: string }; projects: ProjectRow[] }>('/api/v2/projects').then((r) =>
      set(r.ok ? { me: r.body.me, projects: r.body.projects, error: null } : { me: null, projects: [], error: r.message }),
    );
  }, []);
  return state;
}
