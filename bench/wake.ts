// What it costs here to wake a process that sleeps: a one-byte write over
// loopback TCP to a peer process idle in its event loop, which writes the
// byte back. Measured: how long the `write` call itself holds the writer's
// thread (the syscall that wakes the peer), and the round trip. Every answer
// Roost sends to a waiting client pays the first (a flock list's 202 does,
// inside the item's time); every request and answer between two processes
// pays the second. On a virtual machine both are mostly the host's work.
// Usage: node dist/bench/wake.js [rounds]; prints one JSON line.

import { fork } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

if (process.argv[2] === 'peer') {
  const s = connect(Number(process.argv[3]), '127.0.0.1');
  s.setNoDelay(true);
  s.on('data', (d) => s.write(d));
  s.on('error', () => process.exit(0));
  s.on('close', () => process.exit(0));
} else {
  const rounds = Number(process.argv[2] ?? 2000);
  const server = createServer();
  server.listen(0, '127.0.0.1', () => {
    const port = (server.address() as { port: number }).port;
    const peer = fork(fileURLToPath(import.meta.url), ['peer', String(port)], { stdio: 'inherit' });
    server.once('connection', (s: Socket) => {
      s.setNoDelay(true);
      void run(s).then((out) => {
        process.stdout.write(JSON.stringify(out) + '\n');
        s.destroy();
        server.close();
        peer.kill();
      });
    });
  });

  async function run(s: Socket) {
    const byte = Buffer.from([1]);
    const write: number[] = [];
    const trip: number[] = [];
    for (let i = 0; i < rounds; i++) {
      // Let the peer fall asleep in its event loop first.
      await new Promise((r) => setTimeout(r, 1));
      const back = new Promise((r) => s.once('data', r));
      const t0 = process.hrtime.bigint();
      s.write(byte);
      const t1 = process.hrtime.bigint();
      await back;
      const t2 = process.hrtime.bigint();
      write.push(Number(t1 - t0) / 1000);
      trip.push(Number(t2 - t0) / 1000);
    }
    const pct = (v: number[], p: number) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor((v.length * p) / 100))];
    return { writeP50Us: pct(write, 50), writeP99Us: pct(write, 99), tripP50Us: pct(trip, 50), tripP99Us: pct(trip, 99) };
  }
}
