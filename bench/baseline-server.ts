// The baseline: a bare node:http server that reads a JSON body, parses it and
// answers a small JSON reply. Roost's ingest is compared with it in the same run.
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 0);
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    let n = 0;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      n = Array.isArray(body) ? body.length : 1;
    } catch {}
    const text = JSON.stringify({ ok: true, accepted: n });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
});
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
});
