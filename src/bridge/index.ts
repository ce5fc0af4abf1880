// The workstation bridge: `roost bridge --server URL --token TOKEN --root DIR [--thread T]`.
// Public surface of src/bridge (docs/bridge.md).

import { parseArgs } from 'node:util';
import { Bridge, DEFAULT_APPROVALS } from './bridge.js';

export { Bridge, DEFAULT_APPROVALS, READ_ONLY_TOOLS, hookCommand, type BridgeOptions } from './bridge.js';
export { BoardClient } from './client.js';

export const BRIDGE_HELP = `roost bridge: run the fleet board's Claude Code sessions on this machine

usage:
  roost bridge --server URL --root DIR [--token TOKEN] [--project P] [--thread default] [--name Claude]
               [--approvals RULES] [--window 10m] [--claude PATH]

  --root       sessions run here (plain) or in a git worktree of it (scoped); a request's
               root is a folder inside it
  --thread     the board's thread to follow (default: default)
  --project    the thread's project in shared mode, when the token does not imply it
  --approvals  which tools wait for a member's decision: a regular expression over the tool
               name, "all", or "off" (default: every tool but the read-only ones)
  --window     how long an approval waits before it counts as denied (default 10m)
  --claude     the Claude Code executable (default: claude on the PATH, or ROOST_CLAUDE_BIN)

environment: ROOST_SERVER, ROOST_TOKEN, ROOST_PROJECT, ROOST_CLAUDE_BIN
`;

function parseWindow(v: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v.trim());
  if (!m) throw new Error(`--window must look like 90s, 10m or 1h, got ${v}`);
  const unit = m[2] ?? 'ms';
  const ms = Math.round(Number(m[1]) * (unit === 'h' ? 3_600_000 : unit === 'm' ? 60_000 : unit === 's' ? 1000 : 1));
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
    windowMs: values.window ? parseWindow(values.window) : 10 * 60_000,
    log,
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log('stopping: ending the sessions it runs');
    await bridge.stop('bridge stopped');
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await bridge.start();
  await bridge.ready;
  log(`following thread ${thread} on ${server}`);
}
