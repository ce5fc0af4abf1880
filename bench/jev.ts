// Jev's embedded classifier: `train` (npm run jev:train) fits it on
// data/jev/train.jsonl and keeps it in data/jev/model.json; `calibration`
// (npm run jev:calibration) measures it on the held-out data/jev/test.jsonl,
// or, with `--log <file>`, on the `jev.tag` lines of an exported log (one
// JSON event a line, the owner's corrections taken as the truth where the
// record carries `truth`). Prints accuracy, the Brier score and a reliability table.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/app.js';
import { EmbeddedJev, calibrate, calibrationTable, measure, readCorpus } from '../src/server/flock/jev.js';

const [cmd, flag, file] = process.argv.slice(2);
const data = join(PACKAGE_ROOT, 'data', 'jev');
if (cmd === 'train') {
  const t0 = Date.now();
  const jev = EmbeddedJev.train(readCorpus(join(data, 'train.jsonl')));
  writeFileSync(join(data, 'model.json'), JSON.stringify(jev.toJSON()) + '\n');
  console.log(`trained in ${Date.now() - t0} ms: data/jev/model.json`);
} else if (cmd === 'calibration' && flag === '--log' && file) {
  // A log: jev.tag events with the label that turned out right (`truth`).
  const rows = readCorpus(file) as unknown as { type?: string; question?: string; probs?: Record<string, number>; truth?: string }[];
  for (const q of ['kind', 'mode']) {
    const c = calibrate(rows.filter((r) => r.type === 'jev.tag' && r.question === q && r.probs && r.truth).map((r) => ({ probs: r.probs!, truth: r.truth! })));
    console.log(calibrationTable(q, c) + '\n');
  }
} else if (cmd === 'calibration') {
  const m = await measure(EmbeddedJev.fromRepo(PACKAGE_ROOT), readCorpus(join(data, 'test.jsonl')));
  console.log(calibrationTable('kind (held-out)', m.kind) + '\n\n' + calibrationTable('mode (held-out)', m.mode));
} else {
  console.error('usage: node dist/bench/jev.js train | calibration [--log <file.jsonl>]');
  process.exitCode = 2;
}
