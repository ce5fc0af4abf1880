// The watchdog's embedded scorer: `train` (npm run watch:train) fits its three
// classifiers on data/watch/train.jsonl, their temperatures on
// data/watch/calibration.jsonl, and keeps them in data/watch/model.json;
// `calibration` (npm run watch:calibration) measures them on the held-out
// data/watch/test.jsonl (frames and subjects neither other file uses:
// scripts/watch-corpus.mjs): per question accuracy, ECE, Brier, per-label
// counts and a reliability table, then the band rule's breach call against
// the labels' (a breach: not answering, an unsourced fact, or a contradiction).
// Run from source: `npx tsx scripts/watch.ts train | calibration [--band <b>]`.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/server/app.js';
import { WATCH_SCORES, isBreach } from '../src/core/flock.js';
import { JEV_BAND, calibrationTable } from '../src/server/flock/jev.js';
import { EmbeddedWatchScorer, measureWatch, readWatchCorpus } from '../src/server/flock/watch-scorer.js';

const [cmd] = process.argv.slice(2);
const data = join(PACKAGE_ROOT, 'data', 'watch');
if (cmd === 'train') {
  const t0 = Date.now();
  const s = EmbeddedWatchScorer.train(readWatchCorpus(join(data, 'train.jsonl')), readWatchCorpus(join(data, 'calibration.jsonl')));
  writeFileSync(join(data, 'model.json'), JSON.stringify(s.toJSON()) + '\n');
  console.log(`trained in ${Date.now() - t0} ms: data/watch/model.json (temperatures: ${WATCH_SCORES.map((q) => `${q} ${s.models[q].temperature}`).join(', ')})`);
} else if (cmd === 'calibration') {
  const at = process.argv.indexOf('--band');
  const band = at > 0 ? Number(process.argv[at + 1]) : JEV_BAND;
  const s = EmbeddedWatchScorer.fromRepo(PACKAGE_ROOT);
  const rows = readWatchCorpus(join(data, 'test.jsonl'));
  console.log(`temperatures (fitted on data/watch/calibration.jsonl): ${WATCH_SCORES.map((q) => `${q} ${s.models[q].temperature}`).join(', ')}\n`);
  const m = measureWatch(s, rows);
  for (const q of WATCH_SCORES) console.log(calibrationTable(`${q} (held-out)`, m[q]) + '\n');
  let tp = 0, fp = 0, fn = 0, tn = 0;
  for (const r of rows) {
    const said = isBreach(s.score(r), band);
    const truth = r.answers_request === 0 || r.states_fact_without_source === 1 || r.contradicts_earlier === 1;
    if (said && truth) tp++;
    else if (said) fp++;
    else if (truth) fn++;
    else tn++;
  }
  console.log(`breach by the band rule at ${band} (held-out, n ${rows.length}): accuracy ${((tp + tn) / rows.length).toFixed(4)}; flagged ${tp + fp} (${tp} right, ${fp} wrongly); missed ${fn}; passed ${tn} rightly`);
} else {
  console.error('usage: npx tsx scripts/watch.ts train | calibration [--band <b>]');
  process.exitCode = 2;
}
