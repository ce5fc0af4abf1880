// The reporter of scripts/test.mjs's test processes (scripts/test-group.mjs):
// one `spec` reporter per test file, fed that file's events only, so each file
// has its own text (its tests, then its own "failing tests" block) even when
// several files ran in one process. The files run one after another in the
// order of the process's arguments, each followed by the group's do-nothing
// test: every event before that test passes is the running file's (a test
// defined in a shared module, as test/storage.contract.ts's, too). When a file
// ends it writes one JSON line to its destination: the file, its spec text and
// its counts of passed, failed and skipped tests.
import { spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';

const group = fileURLToPath(new URL('./test-group.mjs', import.meta.url));
const order = process.argv.slice(2);

export default async function* report(source) {
  let i = 0;
  let f = null;
  const open = () => {
    const s = new spec();
    const text = [];
    s.on('data', (d) => text.push(String(d)));
    return { file: order[i], s, text, passed: 0, failed: 0, skipped: 0 };
  };
  const close = async () => {
    const ended = new Promise((done) => f.s.on('end', done));
    f.s.end();
    await ended;
    const line = JSON.stringify({ file: f.file, said: f.text.join(''), passed: f.passed, failed: f.failed, skipped: f.skipped }) + '\n';
    f = null;
    return line;
  };
  for await (const ev of source) {
    const file = ev.data?.file;
    if (!file) continue;
    if (file === group) {
      // The do-nothing test after a file: that file has ended.
      if (ev.type === 'test:pass') {
        f ??= open();
        yield await close();
        i++;
      }
      continue;
    }
    f ??= open();
    f.s.write(ev);
    const leaf = ev.data.details?.type !== 'suite';
    if (ev.type === 'test:pass' && leaf) {
      if (ev.data.skip || ev.data.todo) f.skipped++;
      else f.passed++;
    }
    if (ev.type === 'test:fail' && leaf) f.failed++;
  }
  // A file the process ended in (it died, or it was killed) writes what it had.
  if (f) yield await close();
}
