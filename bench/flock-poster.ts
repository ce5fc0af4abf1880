// The flock bench's client, in a process of its own (bench/flock.ts forks it):
// hands over one list per message from its parent and answers with the list's
// id and two readings of the machine's monotonic clock (shared by every
// process, like the server's), taken as the request leaves and as its 202
// arrives. Outside the server's process, as every client of Roost is: its
// sockets, parsing and garbage are not the server's.

import { Agent, request } from 'node:http';

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

function post(order: PostOrder): Promise<PostReport> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify(order);
    const sent = process.hrtime.bigint();
    const req = request(
      { host: url.hostname, port: url.port, path: '/api/lists', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (data += c));
        res.on('end', () => {
          const accepted = process.hrtime.bigint();
          if (res.statusCode !== 202) reject(new Error(`POST /api/lists answered ${res.statusCode}: ${data}`));
          else resolve({ list_id: (JSON.parse(data) as { list_id: string }).list_id, sent: String(sent), accepted: String(accepted) });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
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
