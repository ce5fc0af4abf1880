// Live boards for the views that show them: one client (one stream) per
// thread and project per tab, shared by every mounted view that needs it (the
// board, the inbox's fleet section, the nav badge), opened on first use and
// closed when the last one unmounts.
import { useEffect, useState } from 'preact/hooks';
import { FleetClient } from './fleet.js';

declare global {
  interface Window {
    /** A read-only window for tests: the fleet boards this page folds, by thread. */
    __roostFleet?: Record<string, FleetClient>;
  }
}

interface Shared {
  client: FleetClient;
  listeners: Set<() => void>;
}

const open = new Map<string, Shared>();

function acquire(thread: string, project: string, listener: () => void): Shared {
  const key = `${project}\u0000${thread}`;
  let s = open.get(key);
  if (!s) {
    const client = new FleetClient(thread, project);
    const shared: Shared = { client, listeners: new Set() };
    client.onChange = () => {
      for (const l of shared.listeners) l();
    };
    void client.start();
    (window.__roostFleet ??= {})[thread] = client;
    open.set(key, (s = shared));
  }
  s.listeners.add(listener);
  return s;
}

function release(thread: string, project: string, listener: () => void): void {
  const key = `${project}\u0000${thread}`;
  const s = open.get(key);
  if (!s) return;
  s.listeners.delete(listener);
  if (s.listeners.size > 0) return;
  s.client.stop();
  open.delete(key);
  if (window.__roostFleet?.[thread] === s.client) delete window.__roostFleet[thread];
}

export function useFleet(thread: string, project = ''): FleetClient {
  const [, setTick] = useState(0);
  const [listener] = useState(() => () => setTick((n) => n + 1));
  // Acquired during render so the first render already has the client; the
  // effect below only pairs it with its release.
  const s = acquire(thread, project, listener);
  useEffect(() => () => release(thread, project, listener), [thread, project, listener]);
  return s.client;
}
