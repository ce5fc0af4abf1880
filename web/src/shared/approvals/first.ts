// The decision a page opened by a notification names (`/inbox/<id>`), as the
// server has it now: one `GET /approvals/:id` (the route table's), read by the
// approvals fold's own reader. A fresh page shows it until the project's
// approvals fold has its first snapshot, which comes only once the tab's
// share of the live connection is set up: on a phone that is most of the
// wait. From the snapshot on, the fold alone is shown (approvals/InboxView.tsx,
// docs/web.md "What loads when"); this is never a second list of approvals.
//
// The shell asks as the page starts (main.tsx), before the inbox's code is in,
// and the inbox reads the same answer: one request per decision and tab.

import { approvalsFromJSON, type Approval } from '../../../../src/core/approvals.js';
import { getJson } from '../api.js';
import { inProject } from '../scope.js';

/** The approval a path names (`/inbox/<id>`: a notification's link), or ''. */
export function decisionOfPath(pathname: string): string {
  const m = /^\/inbox\/([A-Za-z0-9_.:-]{1,128})$/.exec(pathname);
  return m ? m[1] : '';
}

interface Look {
  /** Settles with the approval, or null when the server does not give it (gone, no access, unreachable). */
  promise: Promise<Approval | null>;
  /** What it settled with; undefined while asked. */
  value?: Approval | null;
}

/** At most a few: a tab opens a handful of decisions. */
const LOOKS = new Map<string, Look>();
const MAX_LOOKS = 16;

/** The server's answer for approval `id` of `project` ('' or 'default': the default one), asked once per tab. */
export function firstLook(id: string, project: string): Look {
  const key = `${project}\n${id}`;
  let look = LOOKS.get(key);
  if (look) return look;
  if (LOOKS.size >= MAX_LOOKS) LOOKS.delete(LOOKS.keys().next().value!);
  const asked: Look = {
    promise: getJson<Approval>(inProject(`/approvals/${encodeURIComponent(id)}`, project)).then((r) => {
      const a = r.ok && r.body && typeof r.body === 'object' && r.body.id === id ? (approvalsFromJSON({ approvals: [r.body], closed: [], forgotten: [], rev: 0 }).byId.get(id) ?? null) : null;
      asked.value = a;
      return a;
    }),
  };
  LOOKS.set(key, (look = asked));
  return look;
}
