// A second reporter beside `spec` for scripts/test.mjs: it times each test file
// (from its first dequeue to its last completion, as the parent sees the events)
// and counts the tests, then writes one JSON object to its destination. The
// runner prints the slowest files and a closing "N passed, N failed" line from it.
export default async function* timing(source) {
  const files = new Map();
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for await (const ev of source) {
    const file = ev.data?.file;
    if (!file) continue;
    let f = files.get(file);
    if (!f) {
      f = { start: 0, end: 0, passed: 0, failed: 0 };
      files.set(file, f);
    }
    const now = Date.now();
    if (ev.type === 'test:dequeue' && f.start === 0) f.start = now;
    if (ev.type === 'test:complete') f.end = now;
    const leaf = ev.data.details?.type !== 'suite';
    if (ev.type === 'test:pass' && leaf) {
      if (ev.data.skip || ev.data.todo) skipped++;
      else {
        passed++;
        f.passed++;
      }
    }
    if (ev.type === 'test:fail' && leaf) {
      failed++;
      f.failed++;
    }
  }
  const out = [...files].map(([file, f]) => ({ file, ms: f.start && f.end ? f.end - f.start : 0, passed: f.passed, failed: f.failed }));
  yield JSON.stringify({ passed, failed, skipped, files: out });
}
