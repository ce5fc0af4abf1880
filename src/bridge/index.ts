// The workstation bridge, which is also the member's Space in Work:
// `roost bridge --server URL --token TOKEN --root DIR [--space NAME] [--thread T]`.
// Public surface of src/bridge (docs/bridge.md, docs/work.md).

import { parseArgs } from 'node:util';
import { Bridge, DEFAULT_APPROVALS } from './bridge.js';
import { parseWindow } from '../core/window.js';

export { Bridge, DEFAULT_APPROVALS, READ_ONLY_TOOLS, type BridgeOptions } from './bridge.js';
export { hookCommand } from './approvals.js';
export { BoardClient, Connection } from './client.js';
export { SpaceLink, type DueCommand, type Observation } from './work.js';
export { HandStarted } from './hands.js';

export const BRIDGE_HELP = `roost bridge: this machine as your Space: runs Claude Code sessions for the board and for Work

usage:
  roost bridge --server URL --root DIR [--token TOKEN] [--project P] [--thread default] [--name Claude]
               [--space NAME] [--contribute] [--agents 0] [--hooks-port N]
               [--approvals RULES] [--window 10m] [--claude PATH]

  --root        sessions run here (plain) or in a git worktree of it (scoped); a request's
                root is a folder inside it
  --thread      the board's thread to follow (default: default)
  --project     the project (shared mode: the thread's and the Space's), when the token does
                not imply it
  --space       the Space's name in Work (default: this machine's host name); a restart with
                the same name is the same Space
  --contribute  contribute the Space to --project (or default) at start; otherwise contribute
                it from the Work view
  --agents      standing Claude Code sessions to run in --root from the start (default 0);
                they resume the same conversation after a restart
  --hooks-port  listen on 127.0.0.1:N for Claude Code hook events of sessions started by hand
                (trusted local agents; 0: any free port)
  --approvals   which tools wait for a member's decision: a regular expression over the tool
                name, "all", or "off" (default: every tool but the read-only ones)
  --window      how long an approval waits before it counts as denied (default 10m)
  --claude      the Claude Code executable (default: claude on the PATH, or ROOST_CLAUDE_BIN)

Every session it runs is a board session and a Work agent of the Space (keyed by its
Claude Code session id); Work commands queued to it are written in as prompts, one at a time.
environment: ROOST_SERVER, ROOST_TOKEN, ROOST_PROJECT, ROOST_CLAUDE_BIN
`;

/** `--window`: the one parser (src/core/window.ts), with the bridge's bounds. */
function windowOption(v: string): number {
  const ms = parseWindow(v);
  if (ms === undefined) throw new Error(`--window must look like 90s, 10m or 1h, got ${v}`);
  if (ms < 1000 || ms > 24 * 3_600_000) throw new Error('--window must be between 1s and 24h');
  return ms;
}

export async function bridgeCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      server: { type: 'string' },
      token: { type: 'string' },
      project: { type: 'string' },
      root: { type: 'string' },
      thread: { type: 'string' },
      name: { type: 'string' },
      approvals: { type: 'string' },
      window: { type: 'string' },
      claude: { type: 'string' },
      space: { type: 'string' },
      contribute: { type: 'boolean' },
      agents: { type: 'string' },
      'hooks-port': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(BRIDGE_HELP);
    return;
  }
  const server = values.server ?? process.env.ROOST_SERVER;
  if (!server) throw new Error(`--server is required\n\n${BRIDGE_HELP}`);
  if (!values.root) throw new Error(`--root is required\n\n${BRIDGE_HELP}`);
  const thread = values.thread ?? 'default';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(thread)) throw new Error('--thread is 1 to 64 letters, digits, "-" or "_"');
  const agents = Number(values.agents ?? 0);
  if (!Number.isInteger(agents) || agents < 0 || agents > 20) throw new Error('--agents is 0 to 20');
  const hooksPort = values['hooks-port'] !== undefined ? Number(values['hooks-port']) : undefined;
  if (hooksPort !== undefined && !(Number.isInteger(hooksPort) && hooksPort >= 0 && hooksPort < 65536)) throw new Error('--hooks-port is a port number (0: any free port)');
  if (values.space !== undefined && !values.space.trim()) throw new Error('--space needs a name');
  const log = (l: string) => console.log(`[bridge ${new Date().toISOString().slice(11, 19)}] ${l}`);
  const bridge = new Bridge({
    server,
    token: values.token ?? process.env.ROOST_TOKEN,
    project: values.project ?? process.env.ROOST_PROJECT,
    root: values.root,
    thread,
    name: values.name ?? 'Claude',
    claude: values.claude ?? process.env.ROOST_CLAUDE_BIN ?? 'claude',
    approvals: values.approvals ?? DEFAULT_APPROVALS,
    windowMs: values.window ? windowOption(values.window) : 10 * 60_000,
    space: values.space?.trim(),
    contribute: values.contribute,
    agents,
    hooksPort,
    log,
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) {
      // A second signal: out now (what the first one had not finished is cleaned up at the next start).
      log('stopping now');
      process.exit(1);
    }
    stopping = true;
    log('stopping: ending the sessions it runs (Ctrl-C again to quit at once)');
    // The stop is bounded (processes: 3 s to SIGKILL; posts: 5 s); this is a last guard.
    setTimeout(() => {
      log('stopping took too long: exiting');
      process.exit(1);
    }, 20_000).unref();
    await bridge.stop('bridge stopped').catch((e) => log(`stopping failed: ${(e as Error).message}`));
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  await bridge.start();
  await bridge.ready;
  log(`following thread ${thread} on ${server}`);
}
