// A list's resume after its driving node dies (issue 37, point 10), on PostgreSQL:
//
//   node dist/bench/lease.js <postgres-url> [runs=3]
//     Per run, a fresh schema and two `roost serve --db ... --model ...`
//     processes with the default lease, a scripted model (test/support/
//     flock-model.ts) whose crows take 20 s. A list is handed over, its
//     triage approved, and once a crow is in the air the node holding the
//     lease is killed with SIGKILL. Measured from the kill: when the other
//     node names itself the driver (`GET /api/flock`), and when the list
//     resumes (the crow in the air is asked again, by the surviving node).
//     Prints one JSON line: each run's two figures, ms.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { child, type ChildServer } from '../test/support/server.js';
import { flockModel } from '../test/support/flock-model.js';
import { flockClient } from '../test/support/flock-client.js';

const [base, runsArg] = process.argv.slice(2);
if (!base) throw new Error('usage: lease.js <postgres-url> [runs]');
const runs = Number(runsArg ?? 3);

async function driver(url: string): Promise<string> {
  return ((await (await fetch(url + '/api/flock')).json()) as { driver: string }).driver;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function once(): Promise<{ driverMs: number; resumeMs: number }> {
  const schema = `roost_bench_lease_${randomBytes(4).toString('hex')}`;
  const url = `${base}${base.includes('?') ? '&' : '?'}schema=${schema}`;
  const model = await flockModel('anthropic', { slowMs: 20_000 });
  const nodes: ChildServer[] = [];
  try {
    const args = ['--db', url, '--model', model.spec];
    const env = { ANTHROPIC_API_KEY: 'bench-key' };
    nodes.push(...(await Promise.all([child({ env, args }), child({ env, args })])));
    const c = flockClient(nodes[0].url);
    const list_id = await c.start('slow writing the resume note', 'bench');
    const w = await c.watch(list_id);
    await w.next('item.triaged', () => true, 60_000);
    await c.verdict(`${list_id}-1`, 'triage', true);
    const flying = await w.next('crow.flying', (d) => d.crow !== 'Sentry', 60_000);
    w.close();
    const name = await driver(nodes[0].url);
    const holder = nodes.find((n) => name.includes(`-${n.proc.pid}-`))!;
    const other = nodes.find((n) => n !== holder)!;
    const crowAsks = () => model.asks().filter((x) => x.tool === null && x.system.startsWith(`You are ${flying.data.crow},`)).length;
    const asked = crowAsks();
    await holder.stop('SIGKILL');
    const killed = performance.now();
    let driverMs = NaN;
    let resumeMs = NaN;
    while (performance.now() - killed < 120_000 && (Number.isNaN(driverMs) || Number.isNaN(resumeMs))) {
      if (Number.isNaN(driverMs) && (await driver(other.url)).includes(`-${other.proc.pid}-`)) driverMs = performance.now() - killed;
      if (Number.isNaN(resumeMs) && crowAsks() > asked) resumeMs = performance.now() - killed;
      await sleep(20);
    }
    return { driverMs, resumeMs };
  } finally {
    for (const n of nodes) await n.stop('SIGKILL');
    await model.close();
    const cl = new pg.Client({ connectionString: base });
    await cl.connect();
    await cl.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => cl.end());
  }
}

const results: { driverMs: number; resumeMs: number }[] = [];
for (let i = 0; i < runs; i++) results.push(await once());
process.stdout.write(JSON.stringify({ runs: results }) + '\n');
