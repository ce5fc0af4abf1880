// Jev's embedded classifier: `train` (npm run jev:train) fits it on
// data/jev/train.jsonl, fits its temperature on data/jev/calibration.jsonl and
// keeps it in data/jev/model.json; `calibration` (npm run jev:calibration)
// measures it on the held-out data/jev/test.jsonl (styles the training set
// does not use),
// or, with `--log <file>`, on the `jev.tag` lines of an exported log (one
// JSON event a line, the owner's corrections taken as the truth where the
// record carries `truth`), or with `--data <dir>` / `--db <postgres url>` on a
// server's own log (the owner's corrections, else the author's header, as the
// truth: src/server/flock/jev-log.ts). Prints accuracy, ECE, the Brier score, per-label counts and a reliability table.
// Run from source: `npx tsx scripts/jev.ts train | calibration …`.
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/app.js';
import { EmbeddedJev, calibrate, calibrationTable, measure, readCorpus } from '../src/server/flock/jev.js';
import { calibrationFromStore } from '../src/server/flock/jev-log.js';
import { openStore } from '../src/storage/index.js';

const [cmd, flag, file] = process.argv.slice(2);
const data = join(PACKAGE_ROOT, 'data', 'jev');
if (cmd === 'train') {
  const t0 = Date.now();
  const jev = EmbeddedJev.train(readCorpus(join(data, 'train.jsonl')), readCorpus(join(data, 'calibration.jsonl')));
  writeFileSync(join(data, 'model.json'), JSON.stringify(jev.toJSON()) + '\n');
  console.log(`trained in ${Date.now() - t0} ms: data/jev/model.json (temperature: kinds ${jev.kinds.model.temperature}, modes ${jev.modes.model.temperature})`);
} else if (cmd === 'calibration' && flag === '--log' && file) {
  // A log: jev.tag events with the label that turned out right (`truth`).
  const rows = readCorpus(file) as unknown as { type?: string; question?: string; probs?: Record<string, number>; truth?: string }[];
  for (const q of ['kind', 'mode']) {
    const c = calibrate(rows.filter((r) => r.type === 'jev.tag' && r.question === q && r.probs && r.truth).map((r) => ({ probs: r.probs!, truth: r.truth! })));
    console.log(calibrationTable(q, c) + '\n');
  }
} else if (cmd === 'calibration' && (flag === '--data' || flag === '--db') && file) {
  // A server's store: its flock stream's jev.tag events against the log's truth (src/server/flock/jev-log.ts).
  const at = process.argv.indexOf('--project');
  const project = at > 0 && process.argv[at + 1] ? process.argv[at + 1] : 'default';
  const store = await openStore(flag === '--db' ? { db: file, dataDir: '.' } : { dataDir: resolve(file) });
  try {
    const c = await calibrationFromStore(store, project);
    console.log(`project ${project}: ${c.tags} tags in the log; counted ${c.byOwner + c.byHeader} (${c.byOwner} by the owner's correction, ${c.byHeader} by the author's header)\n`);
    console.log(calibrationTable('kind (log)', c.kind) + '\n\n' + calibrationTable('mode (log)', c.mode));
  } finally {
    await store.close();
  }
} else if (cmd === 'calibration') {
  const jev = EmbeddedJev.fromRepo(PACKAGE_ROOT);
  console.log(`temperature (fitted on data/jev/calibration.jsonl): kinds ${jev.kinds.model.temperature}, modes ${jev.modes.model.temperature}\n`);
  const m = await measure(jev, readCorpus(join(data, 'test.jsonl')));
  console.log(calibrationTable('kind (held-out)', m.kind) + '\n\n' + calibrationTable('mode (held-out)', m.mode));
} else {
  console.error('usage: npx tsx scripts/jev.ts train | calibration [--log <file.jsonl> | --data <data dir> | --db <postgres url>] [--project <id>]');
  process.exitCode = 2;
}
