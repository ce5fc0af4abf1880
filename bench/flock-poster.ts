// The flock bench's client, in a process of its own (bench/flock.ts forks it):
// hands over one list per message from its parent and answers with the list's
// id and two readings of the machine's monotonic clock (shared by every
// process, like the server's), taken as the request leaves and as its 202
// arrives. Outside the server's process, as every client of Roost is: its
// sockets, parsing and garbage are not the server's.

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

const url = new URL(process.argv[2]);
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

async function post(order: PostOrder): Promise<PostReport> {
  const sent = process.hrtime.bigint();
  const r = await postJson(agent, url, '/api/lists', JSON.stringify(order));
  const accepted = process.hrtime.bigint();
  if (r.status !== 202) throw new Error(`POST /api/lists answered ${r.status}: ${r.text}`);
  return { list_id: (JSON.parse(r.text) as { list_id: string }).list_id, sent: String(sent), accepted: String(accepted) };
}

process.on('message', (m: PostOrder) => {
  post(m).then(
    (r) => process.send!(r),
    (e: Error) => process.send!({ error: e.message }),
  );
});
process.on('disconnect', () => {
  agent.destroy();
  process.exit(0);
});
