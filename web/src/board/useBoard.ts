// One live board per mounted view: opens the thread's stream, re-renders the
// view when frames were folded (batched by the client), closes on unmount.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { SessionsClient } from './live.js';

declare global {
  interface Window {
    /** A read-only window for tests: the boards this page folds, by thread. */
    __roostBoards?: Record<string, SessionsClient>;
  }
}

export function useBoard(thread: string, project = ''): SessionsClient {
  const client = useMemo(() => new SessionsClient(thread, project), [thread, project]);
  const [, setTick] = useState(0);
  useEffect(() => {
    client.onChange = () => setTick((n) => n + 1);
    void client.start();
    const hooks = (window.__roostBoards ??= {});
    hooks[thread] = client;
    return () => {
      client.stop();
      if (hooks[thread] === client) delete hooks[thread];
    };
  }, [client]);
  return client;
}
