// One bridge per root, held by the kernel. On Linux a bridge listens on an
// abstract Unix socket named after its root's real path: binding a name is
// atomic, so of two bridges started at the same instant exactly one gets it,
// and the kernel frees the name when the process ends, SIGKILL included, so
// there is never a stale lock to clean up. Other systems have no abstract
// sockets; there the owner recorded in the state file (pid and start time,
// src/bridge/children.ts) is the only guard, and two bridges started at the
// same instant can both pass it. Abstract names belong to a network namespace,
// so the same holds between containers that share a folder but not a network.

import { createHash } from 'node:crypto';
import { createServer } from 'node:net';

export interface RootLock {
  release(): Promise<void>;
}

const NO_LOCK: RootLock = { release: async () => {} };

/** Takes the lock of a root (its real path); null when another process holds it. */
export function lockRoot(rootReal: string): Promise<RootLock | null> {
  if (process.platform !== 'linux') return Promise.resolve(NO_LOCK);
  const name = '\0roost-bridge-' + createHash('sha256').update(rootReal).digest('hex').slice(0, 40);
  return new Promise((ok) => {
    const server = createServer((c) => c.destroy());
    server.once('error', (e: NodeJS.ErrnoException) => {
      // Held: another bridge runs there. Any other failure (a sandbox without
      // Unix sockets) leaves the state file's owner check to guard the root.
      ok(e.code === 'EADDRINUSE' ? null : NO_LOCK);
    });
    server.listen(name, () => {
      server.unref();
      let released: Promise<void> | null = null;
      ok({ release: () => (released ??= new Promise<void>((done) => server.close(() => done()))) });
    });
  });
}
