// The reporter of scripts/test.mjs's test processes (scripts/test-group.mjs):
// one `spec` reporter per test file, fed that file's events only, so each file
// has its own text (its tests, then its own "failing tests" block) even when
// several files ran in one process. The files run one after another in the
// order of the process's arguments, each followed by the group's do-nothing
// test: every event before that test passes is the running file's (a test
// defined in a shared module, as test/storage.contract.ts's, too). Its
// destination is the process's stdout, read by the runner: each line of a
// file's text as it comes (so a file that hangs and is killed still shows how
// far it got), marked with the file's place in the arguments, and when the
// file ends a line with its counts of passed, failed and skipped tests.
import { spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';

const group = fileURLToPath(new URL('./test-group.mjs', import.meta.url));
export const TAG = '\u0002roost-test ';

export default async function* report(source) {
  let i = 0;
  let f = null;
  const text = [];
  const open = () => {
    const s = new spec();
    s.on('data', (d) => text.push(String(d)));
    return { s, passed: 0, failed: 0, skipped: 0 };
  };
  // The file's text so far, each line marked with the file's place.
  const lines = () => {
    const out = text.splice(0).join('');
    return out ? out.replace(/^(?=.)|(?<=\n)(?=.)/gm, `${TAG}${i} `).replace(/\n(?=\n)/g, `\n${TAG}${i} `) : '';
  };
  for await (const ev of source) {
    const file = ev.data?.file;
    if (!file) continue;
    if (file === group) {
      // The do-nothing test after a file: that file has ended.
      if (ev.type === 'test:pass') {
        f ??= open();
        const ended = new Promise((done) => f.s.on('end', done));
        f.s.end();
        await ended;
        yield lines() + `${TAG}${i} counts ${JSON.stringify({ passed: f.passed, failed: f.failed, skipped: f.skipped })}\n`;
        f = null;
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
    await new Promise((done) => setImmediate(done));
    const out = lines();
    if (out) yield out;
  }
  // A file the process ended in (the stream ended before its end) writes what it had, and its counts.
  if (f) {
    const ended = new Promise((done) => f.s.on('end', done));
    f.s.end();
    await ended;
    yield lines() + `${TAG}${i} counts ${JSON.stringify({ passed: f.passed, failed: f.failed, skipped: f.skipped })}\n`;
  }
}
