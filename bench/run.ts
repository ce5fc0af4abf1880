// `npm run bench`: measures Roost on this machine and prints one table.
// Every workload runs `--runs` times (default 3) and reports the median and the
// range; servers and the load generator are separate processes. bench/README.md
// says how to read the table (method, the host rows, noise).
//
//   npm run bench [-- <workload> ...]        (or node dist/bench/run.js ...)
//     [--only a,b,...]   the same selection as names
//     [--quick] [--runs 3] [--seconds 5] [--warmup 1] [--events N]
//     [--db postgres://...] [--nodes 2]
//
// A workload is one file, bench/workloads/<name>.ts, default-exporting a
// `Workload` (bench/lib.ts); it runs when it is named in this list, in this order.

import { args, cleanup, DB, NODES, positionals, printTable, RUNS, SECONDS, type Workload } from './lib.js';

const WORKLOADS = [
  'host',
  'ingest',
  'batch',
  'fanout',
  'mux',
  'tabs',
  'floor500',
  'push',
  'webhooks',
  'idle',
  'storm',
  'restart',
  'hostile',
  'nests',
  'lease',
  'hooks',
  'trust',
  'approval-rules',
  'bulk',
  'restart-agents',
  'fold',
  'search',
  'rewind',
  'search-index-ingest',
  'work-fold',
  'flock',
  'flock-ingest',
  'signin',
  'budget',
  'capacity',
  'proxy',
];

async function main(): Promise<void> {
  const t0 = Date.now();
  const named = [...positionals, ...(args.only ? args.only.split(',') : [])].filter((n) => n !== '');
  const unknown = named.filter((n) => !WORKLOADS.includes(n));
  if (unknown.length) throw new Error(`no workload named ${unknown.join(', ')}; the workloads: ${WORKLOADS.join(', ')}`);
  const selected = named.length ? WORKLOADS.filter((n) => named.includes(n)) : WORKLOADS;
  process.stderr.write(`roost bench: ${RUNS} run(s) per workload, ${SECONDS}s load windows, store ${DB ? 'postgres' : 'sqlite'}, ${NODES} node(s)\n`);
  for (const name of selected) {
    const w = ((await import(`./workloads/${name}.js`)) as { default: Workload }).default;
    const fits = w.needs === 'one node' ? NODES === 1 : w.needs === 'sqlite' ? !DB : w.needs === 'postgres' ? !!DB : true;
    if (!fits) {
      if (named.length) process.stderr.write(`  ${name}: not run (it needs ${w.needs === 'one node' ? 'one node' : w.needs === 'sqlite' ? 'SQLite (no --db)' : 'PostgreSQL (--db)'})\n`);
      continue;
    }
    await w.run();
  }
  printTable();
  process.stdout.write(`\n${RUNS} run(s) each; median and range; ${((Date.now() - t0) / 1000).toFixed(0)} s in all; node ${process.version}, ${DB ? 'postgres' : 'sqlite'}, ${NODES} node(s)\n`);
}

main()
  .catch((e) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(cleanup);
