// A call the command hook denied on its own because Roost was down is
// reported once Roost is back (the real Claude Code CLI, headless, against the
// scripted model stand-in), so a late "allow" is refused (409) instead of
// recorded for a call that never ran.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { need } from './support/env.js';
import { child, freePort, tempDir } from './support/server.js';
import { claudeAvailable, claudeSetup, spawnClaude, type ClaudeSetup } from './support/claude.js';
import { until } from './support/until.js';
import { endReporter, spoolOf, spooled } from './support/hook-spool.js';
import { modelStandin, toolResults } from './support/model-standin.js';
import { MARKER, approvalsOf, built, decide, install, markerScript, pendingMarker } from './support/approvals-claude.js';

/** The spooled reports of a Claude setup's hooks (they run with its HOME). */
function spool(setup: ClaudeSetup): string[] {
  return spooled(spoolOf(setup.home));
}

test('Roost dies while a call waits: the hook denies on its own and reports it once Roost is back; a late allow is refused (409)', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const port = await freePort();
  const dataDir = tempDir();
  let server = await child({ port, dataDir });
  const setup = claudeSetup('shop');
  const model = await modelStandin(markerScript('toolu_down'));
  try {
    install(setup.project, server.url, '--approvals', 'Bash', '--window', '60s');
    const run = spawnClaude(setup, model.url, 'write the marker');
    const p = await pendingMarker(server.url);
    await server.stop('SIGKILL');
    const r = await run.done;
    assert.equal(r.code, 0);
    const result = model.requests.flatMap(toolResults).find((x) => x.tool_use_id === 'toolu_down');
    assert.ok(result?.is_error, 'the call was denied');
    assert.match(result.content, /could not be reached.*denied because approvals are required/);
    assert.equal(existsSync(join(setup.project, MARKER)), false);
    // Back up, and someone allows the request still pending in the log: refused, the call never ran.
    server = await child({ port, dataDir });
    const late = await decide(server.url, p.id, 'allow');
    assert.equal(late.status, 409, `a late allow is refused: ${JSON.stringify(late.json)}`);
    assert.match(late.json.message, /withdrawn/);
    const a = (await approvalsOf(server.url)).recent.find((x) => x.id === p.id);
    assert.equal(a.status, 'withdrawn');
    assert.equal(a.decidedBy, '', 'nobody decided it');
    await until('the hook’s report sent and its spool emptied', () => spool(setup).length === 0, 30_000, 100);
  } finally {
    endReporter(spoolOf(setup.home));
    await server.stop('SIGKILL');
    await model.close();
  }
});

test('Roost is not there when a call asks: the hook denies, and its report creates the request closed as its own denial; a late allow is refused (409)', async (t) => {
  if (!need(t, claudeAvailable(), 'the Claude Code CLI (npm ci installs @anthropic-ai/claude-code)')) return;
  if (!need(t, built, 'a build (npm run build)')) return;
  const port = await freePort();
  const setup = claudeSetup('shop');
  const model = await modelStandin(markerScript('toolu_never'));
  let server: Awaited<ReturnType<typeof child>> | null = null;
  try {
    install(setup.project, `http://127.0.0.1:${port}`, '--approvals', 'Bash', '--window', '60s');
    const r = await spawnClaude(setup, model.url, 'write the marker').done;
    assert.equal(r.code, 0);
    assert.equal(existsSync(join(setup.project, MARKER)), false);
    assert.equal(spool(setup).length, 1, 'the denial waits in the spool');
    server = await child({ port });
    const a = await until('the reported denial in the log', async () => (await approvalsOf(server!.url)).recent.find((x) => x.tool === 'Bash' && /denied it on its own/.test(x.reason)), 30_000, 100);
    assert.equal(a.status, 'withdrawn');
    assert.match(a.input, /echo yes > approved-marker\.txt/);
    assert.equal((await decide(server.url, a.id, 'allow')).status, 409, 'a late allow is refused');
    await until('the spool emptied', () => spool(setup).length === 0, 10_000, 100);
  } finally {
    endReporter(spoolOf(setup.home));
    await server?.stop('SIGKILL');
    await model.close();
  }
});
