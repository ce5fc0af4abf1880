// One JSON POST on a kept-alive node:http agent, as the flock benches' clients
// send them (in the server's process for the warm-up, in their own for the
// timed lists): the status and the answer's text.

import { request, type Agent } from 'node:http';

export function postJson(agent: Agent, url: URL, path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
