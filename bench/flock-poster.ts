// The flock bench's client, in a process of its own (bench/flock.ts forks it):
// hands over one list per order from its parent, one at a time (an order
// waits for the 202 of the one before it), and keeps, for each, the list's id
// and two readings of the machine's monotonic clock (shared by every process,
// like the server's), taken as the request leaves and as its 202 arrives.
// Outside the server's process, as every client of Roost is: its sockets,
// parsing and garbage are not the server's.
//
// The readings go to the parent only when it asks (`{ reports: true }`),
// after the timed lists: a message per list would land in the server's
// process while the next list flies, and its reading and parsing there are
// the bench's cost, not Roost's.

import { Agent } from 'node:http';
import { postJson } from './post-json.js';

export interface PostOrder {
  text: string;
  requester: string;
}

export interface PostReport {
  list_id: string;
  /** process.hrtime.bigint() as the request left, and as its 202 had arrived (ns, decimal). */
  sent: string;
  accepted: string;
}

/** What the poster sends its parent: every report since the last ask, or the error that stopped it. */
export type PosterMessage = { reports: PostReport[] } | { error: string };

const url = new URL(process.argv[2]);
const agent = new Agent({ keepAlive: true, maxSockets: 4 });
let reports: PostReport[] = [];
let chain: Promise<void> = Promise.resolve();

async function post(order: PostOrder): Promise<void> {
  const sent = process.hrtime.bigint();
  const r = await postJson(agent, url, '/api/lists', JSON.stringify(order));
  const accepted = process.hrtime.bigint();
  if (r.status !== 202) throw new Error(`POST /api/lists answered ${r.status}: ${r.text}`);
  reports.push({ list_id: (JSON.parse(r.text) as { list_id: string }).list_id, sent: String(sent), accepted: String(accepted) });
}

process.on('message', (m: PostOrder | { reports: true }) => {
  chain = chain.then(
    () => {
      if ('reports' in m) {
        process.send!({ reports } satisfies PosterMessage);
        reports = [];
        return;
      }
      return post(m).catch((e: Error) => void process.send!({ error: e.message } satisfies PosterMessage));
    },
  );
});
process.on('disconnect', () => {
  agent.destroy();
  process.exit(0);
});
