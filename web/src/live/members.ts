// The members of a project, live: the scope `members:<project>` of the
// browser's one live connection (hub.ts, stream.ts). The scope is lossy and
// every frame, `members`, is the whole list (as GET /projects/:id/members
// answers it), sent when the scope opens (and so again after every reconnect)
// and whenever a membership or a member's name changes, made by anyone: this
// page, another tab, the CLI, an invite accepted. Nothing polls.

import { useEffect, useRef, useState } from 'preact/hooks';
import type { Role } from '../../../src/core/identity.js';
import { LiveStream, type Connection } from './stream.js';

export interface Member {
  uid: string;
  login: string | null;
  name: string;
  role: Role | null;
}

export interface MembersLive {
  /** null until the first frame. */
  members: Member[] | null;
  conn: Connection;
  /** Why the server closed the scope (no longer a member), or ''. */
  closed: string;
}

/** Follows the members of `project`; `onFrame` hears every list (e.g. to notice one's own role changed), and an empty one when the scope is closed. */
export function useMembers(project: string, onFrame?: (members: Member[]) => void): MembersLive {
  const [live, set] = useState<MembersLive>({ members: null, conn: 'connecting', closed: '' });
  const heard = useRef(onFrame);
  heard.current = onFrame;
  useEffect(() => {
    set({ members: null, conn: 'connecting', closed: '' });
    const stream = new LiveStream({
      scope: `members:${project}`,
      cursor: () => '',
      frames: {
        members: (d: { members?: Member[] }) => {
          const members = Array.isArray(d.members) ? d.members : [];
          set({ members, conn: 'live', closed: '' });
          heard.current?.(members);
        },
      },
      onConnection: (conn) => set((l) => ({ ...l, conn })),
      onClosed: (d) => {
        set((l) => ({ ...l, closed: d.reason }));
        heard.current?.([]);
      },
    });
    stream.start();
    return () => stream.stop();
  }, [project]);
  return live;
}
