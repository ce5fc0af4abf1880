// The flock's own overhead (issue 13, targets): a model that answers at once
// (an in-process provider: no network, no tokens to wait for), every verdict
// approved the moment its approval is asked (through the one approvals model,
// as a person's decision would be), on a real server with a SQLite file.
//
// 1. per item: single-item lists one after the other, from the request
//    leaving the client to list.finished folded (after the warm-up trust skips
//    the approvals: the list with the Sentry's flight, its landing with the
//    triage and the worker's flight, the worker's landing with the answer and
//    banter's start, the banter line with the finish: five appends, all lazy;
//    the list's 202 waits for the store's sync, an fdatasync off the event
//    loop that the flight overlaps, and its own time is `accepted`);
//    p50/p99 over `n` lists (1,000 by default: the p99 is then the tenth
//    slowest, not the second of 200), after 200 untimed ones (a running
//    server's cost, not its first seconds' compiling). The client is a
//    process of its own (bench/flock-poster.ts), as a real client is: its
//    sockets and garbage are not the server's; both read the machine's
//    monotonic clock. It sends its readings after the timed lists, not one
//    message per list: each landed in this process while the next list flew.
// 2. 20 lists of 50 items handed over at once, 5 SSE watchers per list (100
//    in all): the time until every list finished, and whether every watcher
//    got every event of its list.
//
// Prints one JSON line: { cpuPerItem, perItemP50, perItemP99, acceptedP50, acceptedP99, appendsPerItem, bulkSeconds, bulkItemsPerSec, watchersComplete, events }.

import { flockBench } from './flock-setup.js';

const N = Number(process.argv[2] ?? 1000);
const LISTS = Number(process.argv[3] ?? 20);
const ITEMS = Number(process.argv[4] ?? 50);
const WATCHERS_PER_LIST = 5;
const WARM = 200;

async function main(): Promise<void> {
  const bench = await flockBench();
  const { roost, post } = bench;
  try {
    // Warm up, timed too: every verdict asked and approved while trust rises (about 60 lists).
    const asked = await bench.warmUp();
    asked.sort((a, b) => a - b);
    const trusted = roost.flock.state.history.filter((c) => c.to === 2).length;
    // Then untimed, as trusted: the same one-item lists until the code they run is optimized
    // (the first few dozen after a start otherwise carry the compiler's work).
    for (let i = 0; i < WARM; i++) await roost.flock.finished(await post('write the release note', `warm-trusted-${i}`));
    // The client is a process of its own; the item's time runs from its request leaving to
    // list.finished folded here (the same clock), whether or not its 202 has arrived by then.
    const poster = await bench.poster();
    const finishedAt = new Map<string, bigint>();
    const unfinished = roost.flock.onListFinished((id) => finishedAt.set(id, process.hrtime.bigint()));
    for (let i = 0; i < 20; i++) await poster.post('write the release note', `warm-poster-${i}`);
    await poster.reports();
    // Appends per item by stream (deterministic, unlike time on a shared machine): the flock's, its crows' on the floor, its calls' usage.
    const appends = new Map<string, number>();
    const unlisten = roost.store.onCommit((stream) => {
      const kind = stream.split(':')[0];
      appends.set(kind, (appends.get(kind) ?? 0) + 1);
    });
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < N; i++) await poster.post('write the release note', `solo-${i}`);
    const cpu = process.cpuUsage(cpu0);
    unlisten();
    unfinished();
    const reports = await poster.reports();
    poster.close();
    if (reports.length !== N) throw new Error(`the poster reported ${reports.length} lists of ${N}`);
    const times = reports.map((r) => Number(finishedAt.get(r.list_id)! - r.sent) / 1e6);
    const accepted = reports.map((r) => Number(r.accepted - r.sent) / 1e6);
    // The server process's CPU per item: what a loaded machine inflates least.
    const cpuPerItem = (cpu.user + cpu.system) / 1000 / N;
    times.sort((a, b) => a - b);
    accepted.sort((a, b) => a - b);
    const pct = (p: number, of = times) => of[Math.min(of.length - 1, Math.floor((of.length * p) / 100))];

    // 20 lists of 50 items at once, 5 watchers each.
    const text = Array.from({ length: ITEMS }, (_, i) => `write note number ${i + 1}`).join('\n');
    const t0 = performance.now();
    const ids = await Promise.all(Array.from({ length: LISTS }, (_, i) => post(text, `bulk-${i}`)));
    const watchers = ids.flatMap((id) =>
      Array.from({ length: WATCHERS_PER_LIST }, async () => {
        const ac = new AbortController();
        const r = await fetch(`${roost.url}/api/events?list_id=${id}`, { signal: ac.signal });
        const dec = new TextDecoder();
        let buf = '';
        let events = 0;
        try {
          for await (const chunk of r.body as unknown as AsyncIterable<Uint8Array>) {
            buf += dec.decode(chunk, { stream: true });
            let cut: number;
            while ((cut = buf.indexOf('\n\n')) >= 0) {
              const block = buf.slice(0, cut);
              buf = buf.slice(cut + 2);
              if (block.includes('\nevent: ') || block.startsWith('event: ')) events++;
              if (block.includes('event: list.finished')) {
                ac.abort();
                return { id, events };
              }
            }
          }
        } catch {}
        return { id, events };
      }),
    );
    await Promise.all(ids.map((id) => roost.flock.finished(id)));
    const bulkMs = performance.now() - t0;
    const got = await Promise.all(watchers);
    // What each list's stream holds: its contract events in the log.
    const expected = new Map<string, number>();
    for (const id of ids) expected.set(id, (roost.flock as unknown as { listFrames: Map<string, { length: number }> }).listFrames.get(id)?.length ?? 0);
    const complete = got.filter((g) => g.events === expected.get(g.id)).length;
    process.stdout.write(
      JSON.stringify({
        cpuPerItem,
        perItemP50: pct(50),
        perItemP99: pct(99),
        acceptedP50: pct(50, accepted),
        acceptedP99: pct(99, accepted),
        appendsPerItem: Object.fromEntries([...appends].map(([k, v]) => [k, Math.round((100 * v) / N) / 100])),
        withApprovalsP50: asked[Math.floor(asked.length / 2)],
        withApprovalsMax: asked[asked.length - 1],
        trustedHolders: trusted,
        bulkSeconds: bulkMs / 1000,
        bulkItemsPerSec: (LISTS * ITEMS) / (bulkMs / 1000),
        watchersComplete: `${complete}/${got.length}`,
        events: [...expected.values()].reduce((a, b) => a + b, 0),
      }) + '\n',
    );
  } finally {
    await bench.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
