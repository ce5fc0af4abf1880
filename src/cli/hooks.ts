// `roost hooks install|uninstall|status`: writes Roost's hooks into an agent
// tool's settings, merging with what is there, and takes only its own out again.
//
//   claude-code  .claude/settings.json   (or ~/.claude/settings.json with --user)
//   codex        .codex/hooks.json       (or ~/.codex/hooks.json)
//   gemini-cli   .gemini/settings.json   (or ~/.gemini/settings.json)
//   cursor       .cursor/hooks.json      (or ~/.cursor/hooks.json)
//
// Which handlers are Roost's: an http handler whose URL has `/hooks/<tool>`, or
// a command handler that runs `roost-hook.js`. Nothing else is marked (agent
// tools may reject unknown keys), and nothing else is touched: install first
// removes Roost's own handlers (so it is idempotent and re-install updates
// the options), then adds the current set; uninstall removes them and any
// group or event list left empty by that.
//
// Claude Code gets http hooks for observation (in-process in Claude Code,
// fast, and a refused connection never blocks the agent) and a command hook
// for approvals (a failed http hook does not block, so a fail-closed decision
// needs a process that answers deny on any error). See docs/integrations.md.

import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { COMMAND_ONLY_EVENTS, OBSERVED_EVENTS, AGENT_TOOLS, type AgentTool } from '../integrations/index.js';
import { DEFAULT_WINDOW_MS } from '../core/approvals.js';
import { claudeMatcher } from '../core/approval-rules.js';
import { PACKAGE_ROOT } from '../server/package.js';
import { formatWindow, parseWindow } from '../core/window.js';
import { addClaudeMcpSettings, addCodexMcp, addMcpServer, mcpEntry, removeClaudeMcpSettings, removeCodexMcp, removeMcpServer } from './mcp-config.js';
import { addClaudeTelemetry, addCodexTelemetry, addGeminiTelemetry, codexConfigPath, readText, removeClaudeTelemetry, removeCodexTelemetry, removeGeminiTelemetry } from './telemetry.js';

export interface HookOptions {
  tool: AgentTool;
  server: string;
  /** Approval rules (`all`, `Bash`, `Edit|Write`, `mcp__.*`), or undefined for none. */
  approvals?: string;
  window: number;
  team?: string;
  /**
   * Shared mode: the name of an environment variable that holds the agent's
   * token. The token itself never goes into the settings file (which a
   * project may commit): http hooks send `Authorization: Bearer $NAME`
   * (Claude Code resolves only variables listed in `allowedEnvVars`), and
   * the command hook reads the same variable.
   */
  tokenEnv?: string;
  /**
   * Claude Code before 2.1.63 has no http hooks: every handler is then the
   * command hook (one node process per hook call, about 0.1 to 0.3 s each).
   */
  commandOnly?: boolean;
  /** How the command hook is run: node's path and the script's. */
  node: string;
  script: string;
}

type Json = Record<string, any>;

/** POSIX shell quoting (the hook command runs through a shell). */
export function shq(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function hookCommand(o: HookOptions, extra: string[]): string {
  const args = [o.node, o.script, o.tool, '--server', o.server, ...(o.team ? ['--team', o.team] : []), ...(o.tokenEnv ? ['--token-env', o.tokenEnv] : []), ...extra];
  return args.map(shq).join(' ');
}

function approvalArgs(o: HookOptions): string[] {
  return o.approvals ? ['--approvals', o.approvals, '--window', formatWindow(o.window)] : [];
}

function hookUrl(o: HookOptions): string {
  const q = new URLSearchParams();
  if (o.team) q.set('team', o.team);
  if (o.approvals) {
    q.set('approvals', o.approvals);
    q.set('window', String(o.window));
  }
  const qs = q.toString();
  return `${o.server.replace(/\/+$/, '')}/hooks/${o.tool}${qs ? '?' + qs : ''}`;
}

/** Seconds the agent tool waits for the approval hook: the window plus a margin, so Roost's deny comes first. */
export function approvalTimeoutSeconds(windowMs: number): number {
  return Math.ceil(windowMs / 1000) + 30;
}

/** The handlers Roost adds, per event: `[event, matcher | undefined, handler]`. */
export function roostHandlers(o: HookOptions): [string, string | undefined, Json][] {
  const out: [string, string | undefined, Json][] = [];
  // Claude Code runs the approval hook for the tools its matcher selects; the
  // hook script then applies the rule itself (approval-rules.ts), so the
  // matcher only has to select at least those tools.
  const approvalMatcher = o.approvals ? (claudeMatcher(o.approvals) ?? '*') : undefined;
  switch (o.tool) {
    case 'claude-code': {
      if (o.commandOnly) {
        for (const e of [...COMMAND_ONLY_EVENTS, ...OBSERVED_EVENTS]) {
          // PreToolUse: one handler that both reports and, for a call under the rules, asks.
          if (e === 'PreToolUse' && o.approvals) out.push([e, '*', { type: 'command', command: hookCommand(o, approvalArgs(o)), timeout: approvalTimeoutSeconds(o.window) }]);
          else out.push([e, '*', { type: 'command', command: hookCommand(o, ['--observe']), timeout: 5 }]);
        }
        break;
      }
      const auth = o.tokenEnv ? { headers: { Authorization: `Bearer $${o.tokenEnv}` }, allowedEnvVars: [o.tokenEnv] } : {};
      for (const e of OBSERVED_EVENTS) out.push([e, '*', { type: 'http', url: hookUrl(o), timeout: 5, ...auth }]);
      for (const e of COMMAND_ONLY_EVENTS) out.push([e, undefined, { type: 'command', command: hookCommand(o, ['--observe']), timeout: 5 }]);
      if (o.approvals) {
        out.push(['PreToolUse', approvalMatcher, { type: 'command', command: hookCommand(o, ['--skip-observe', ...approvalArgs(o)]), timeout: approvalTimeoutSeconds(o.window) }]);
      }
      break;
    }
    case 'codex': {
      // The events Codex 0.171.0 fires (test/fixtures/codex-real-0.171.0). It
      // clamps SessionEnd's and Interrupt's timeout to 3 s (and says so on every
      // start), so those are asked for 3 s; the script gives up after 1.5 s anyway.
      for (const e of ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'SubagentStart', 'SubagentStop', 'Stop', 'PreCompact', 'SessionEnd', 'Interrupt']) {
        out.push([e, undefined, { type: 'command', command: hookCommand(o, ['--observe']), timeout: e === 'SessionEnd' || e === 'Interrupt' ? 3 : 5 }]);
      }
      out.push([
        'PermissionRequest',
        undefined,
        o.approvals
          ? { type: 'command', command: hookCommand(o, approvalArgs(o)), timeout: approvalTimeoutSeconds(o.window) }
          : { type: 'command', command: hookCommand(o, ['--observe']), timeout: 5 },
      ]);
      break;
    }
    case 'gemini-cli': {
      // Gemini CLI's timeouts are in milliseconds. Not PreCompress: the real CLI
      // (0.61.0) fires it before every model turn, it shows nothing, and each
      // hook call is a process start.
      for (const e of ['SessionStart', 'SessionEnd', 'BeforeAgent', 'AfterAgent', 'AfterTool', 'Notification']) {
        out.push([e, undefined, { type: 'command', command: hookCommand(o, ['--observe']), timeout: 5000 }]);
      }
      out.push([
        'BeforeTool',
        undefined,
        o.approvals
          ? { type: 'command', command: hookCommand(o, approvalArgs(o)), timeout: approvalTimeoutSeconds(o.window) * 1000 }
          : { type: 'command', command: hookCommand(o, ['--observe']), timeout: 5000 },
      ]);
      break;
    }
    case 'cursor': {
      for (const e of ['beforeSubmitPrompt', 'afterShellExecution', 'afterMCPExecution', 'afterFileEdit', 'stop']) out.push([e, undefined, { command: hookCommand(o, ['--observe']) }]);
      for (const e of ['beforeShellExecution', 'beforeMCPExecution', 'beforeReadFile']) {
        out.push([e, undefined, { command: hookCommand(o, o.approvals ? approvalArgs(o) : ['--observe']) }]);
      }
      break;
    }
  }
  return out;
}

/** Whether a handler is one of Roost's (for this tool). */
export function isRoostHandler(tool: AgentTool, h: unknown): boolean {
  if (!h || typeof h !== 'object') return false;
  const o = h as Json;
  if (typeof o.url === 'string' && new RegExp(`/hooks/${tool}(\\?|$)`).test(o.url)) return true;
  return typeof o.command === 'string' && /roost-hook\.js/.test(o.command);
}

/** Removes Roost's handlers from a settings object (in place); returns how many went. */
export function removeRoostHooks(tool: AgentTool, settings: Json): number {
  const hooks = settings.hooks;
  if (!hooks || typeof hooks !== 'object' || Array.isArray(hooks)) return 0;
  let removed = 0;
  for (const event of Object.keys(hooks)) {
    const list = hooks[event];
    if (!Array.isArray(list)) continue;
    const kept: unknown[] = [];
    for (const entry of list) {
      if (tool === 'cursor') {
        if (isRoostHandler(tool, entry)) removed++;
        else kept.push(entry);
        continue;
      }
      if (!entry || typeof entry !== 'object' || !Array.isArray(entry.hooks)) {
        kept.push(entry);
        continue;
      }
      const inner = entry.hooks.filter((h: unknown) => !isRoostHandler(tool, h));
      removed += entry.hooks.length - inner.length;
      if (inner.length === entry.hooks.length) kept.push(entry);
      else if (inner.length > 0) kept.push({ ...entry, hooks: inner });
    }
    if (kept.length) hooks[event] = kept;
    else delete hooks[event];
  }
  if (Object.keys(hooks).length === 0) delete settings.hooks;
  return removed;
}

/** Adds Roost's handlers (after removing any old ones); returns the settings object. */
export function addRoostHooks(settings: Json, o: HookOptions): Json {
  removeRoostHooks(o.tool, settings);
  if (!settings.hooks || typeof settings.hooks !== 'object' || Array.isArray(settings.hooks)) settings.hooks = {};
  if (o.tool === 'cursor' && settings.version === undefined) settings.version = 1;
  for (const [event, matcher, handler] of roostHandlers(o)) {
    const list: unknown[] = Array.isArray(settings.hooks[event]) ? settings.hooks[event] : (settings.hooks[event] = []);
    if (o.tool === 'cursor') {
      list.push(handler);
      continue;
    }
    // One group per matcher for Roost's handlers, kept apart from the user's groups.
    const group = list.find((g: any) => g && g.matcher === matcher && Array.isArray(g.hooks) && g.hooks.length && g.hooks.every((h: unknown) => isRoostHandler(o.tool, h))) as Json | undefined;
    if (group) group.hooks.push(handler);
    else list.push(matcher === undefined ? { hooks: [handler] } : { matcher, hooks: [handler] });
  }
  return settings;
}

export function settingsPath(tool: AgentTool, scope: { user: boolean; project: string; home: string }): string {
  const dir = { 'claude-code': '.claude', codex: '.codex', 'gemini-cli': '.gemini', cursor: '.cursor' }[tool];
  const file = tool === 'claude-code' || tool === 'gemini-cli' ? 'settings.json' : 'hooks.json';
  return join(scope.user ? scope.home : scope.project, dir, file);
}

/** Where Claude Code reads the `roost` MCP server: the project's .mcp.json, or (user scope) ~/.claude.json. */
export function claudeMcpPath(user: boolean, project: string, home: string): string {
  return user ? join(home, '.claude.json') : join(project, '.mcp.json');
}

function readSettings(path: string): Json {
  if (!existsSync(path)) return {};
  const text = readFileSync(path, 'utf8');
  if (!text.trim()) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new Error(`${path} is not valid JSON (${(e as Error).message}); fix or move it, then run this again. Nothing was changed.`, { cause: e });
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${path} does not hold a JSON object; nothing was changed`);
  return v;
}

function writeSettings(path: string, settings: Json): void {
  writeText(path, JSON.stringify(settings, null, 2) + '\n');
}

function writeText(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.roost-${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

const USAGE = `usage:
  roost hooks install   [--tool claude-code|codex|gemini-cli|cursor] [--user | --project DIR]
                        [--server URL] [--approvals all|RULES] [--window 10m] [--team NAME]
                        [--token-env NAME]   (shared mode: the variable holding the agent's token)
                        [--command-only]     (Claude Code before 2.1.63, which has no http hooks)
                        [--no-telemetry]     (leave the tool's OpenTelemetry export as it is)
                        [--mcp]              (also register \`roost mcp\` as the tool's MCP server "roost")
  roost hooks uninstall [--tool T] [--user | --project DIR]
  roost hooks status    [--tool T] [--user | --project DIR]

RULES names the tools that wait for a decision: Bash, 'Edit|Write', 'mcp__.*', '!Read|!Grep' (all but those).
`;

/** Runs the `hooks` verb; returns what it printed (also written to stdout). */
export async function hooksCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tool: { type: 'string' },
      user: { type: 'boolean' },
      project: { type: 'string' },
      server: { type: 'string' },
      approvals: { type: 'string' },
      window: { type: 'string' },
      team: { type: 'string' },
      'token-env': { type: 'string' },
      'command-only': { type: 'boolean' },
      'no-telemetry': { type: 'boolean' },
      mcp: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const action = positionals[0];
  if (values.help || !action) {
    process.stdout.write(USAGE);
    return USAGE;
  }
  const tool = (values.tool ?? 'claude-code') as AgentTool;
  if (!AGENT_TOOLS.includes(tool)) throw new Error(`--tool must be one of ${AGENT_TOOLS.join(', ')}`);
  if (values.user && values.project) throw new Error('--user and --project are alternatives: pick one');
  const home = env.HOME || homedir();
  const project = resolve(values.project ?? '.');
  const path = settingsPath(tool, { user: !!values.user, project, home });
  const lines: string[] = [];
  const say = (s: string) => lines.push(s);

  switch (action) {
    case 'install': {
      const server = (values.server ?? env.ROOST_SERVER ?? 'http://127.0.0.1:4319').replace(/\/+$/, '');
      try {
        new URL(server);
      } catch {
        throw new Error(`--server must be a URL like http://127.0.0.1:4319, got ${server}`);
      }
      const window = values.window !== undefined ? parseWindow(values.window) : DEFAULT_WINDOW_MS;
      if (window === undefined || window < 1000) throw new Error(`--window must be a duration like 90s, 10m or 1h (at least 1s), got ${values.window}`);
      let approvals = values.approvals?.trim();
      if (approvals === 'off' || approvals === 'none' || approvals === '') approvals = undefined;
      if (approvals && claudeMatcher(approvals) === null) {
        throw new Error(`--approvals "${approvals}" is not a rule: use all, tool names (Bash), alternatives (Edit|Write), * or .* as a wildcard (mcp__.*), !Name to leave a tool out`);
      }
      const tokenEnv = values['token-env'];
      if (tokenEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv)) throw new Error(`--token-env must be an environment variable name like ROOST_TOKEN, got ${tokenEnv}`);
      const settings = readSettings(path);
      addRoostHooks(settings, {
        tokenEnv,
        commandOnly: values['command-only'],
        tool,
        server,
        approvals,
        window,
        team: values.team,
        node: env.ROOST_HOOK_NODE ?? process.execPath,
        script: join(PACKAGE_ROOT, 'bin', 'roost-hook.js'),
      });
      // Telemetry (tokens and cost) toward the same server, unless asked not to.
      let telemetry = 'telemetry: off (--no-telemetry)';
      if (!values['no-telemetry'] && tool !== 'cursor') {
        if (tool === 'claude-code') telemetry = addClaudeTelemetry(settings, server);
        else if (tool === 'gemini-cli') telemetry = addGeminiTelemetry(settings, server);
        else {
          const cfg = codexConfigPath(path);
          const r = addCodexTelemetry(readText(cfg), server);
          if (r.text !== readText(cfg)) writeText(cfg, r.text);
          telemetry = `${r.said} in ${cfg}`;
        }
      } else if (tool === 'cursor') telemetry = 'telemetry: Cursor exports none';
      // The roost MCP server, when asked for.
      let mcp: string | undefined;
      if (values.mcp) {
        const entry = mcpEntry({ server, team: values.team, tokenEnv, node: env.ROOST_HOOK_NODE ?? process.execPath, script: join(PACKAGE_ROOT, 'bin', 'roost.js') });
        if (tool === 'claude-code') {
          const file = claudeMcpPath(!!values.user, project, home);
          const holder = readSettings(file);
          mcp = addMcpServer(holder, entry);
          if (mcp === 'mcp: roost registered') {
            writeSettings(file, holder);
            addClaudeMcpSettings(settings, !values.user);
            mcp += ` in ${file}`;
          }
        } else if (tool === 'gemini-cli') mcp = addMcpServer(settings, entry);
        else if (tool === 'codex') {
          const cfg = codexConfigPath(path);
          const r = addCodexMcp(readText(cfg), entry);
          if (r.text !== readText(cfg)) writeText(cfg, r.text);
          mcp = `${r.said} in ${cfg}`;
        } else mcp = 'mcp: not registered for Cursor (add `roost mcp` in Cursor’s MCP settings)';
      }
      writeSettings(path, settings);
      say(`roost hooks installed for ${tool} in ${path}`);
      say(`  ${telemetry}`);
      if (mcp) say(`  ${mcp}`);
      if (tool === 'codex') {
        say('  codex:     runs a project\'s .codex/ hooks and config only in a trusted project, and each new or');
        say('             changed hook only once you trust it: open /hooks in Codex (automation that vets its');
        say('             hooks itself may pass --dangerously-bypass-hook-trust)');
      }
      say(`  server:    ${server}`);
      say(`  approvals: ${approvals ? `${approvals} (window ${formatWindow(window)}; unanswered means deny)` : 'off (observe only)'}`);
      if (values.team) say(`  team:      ${values.team}`);
      if (tokenEnv) say(`  token:     from $${tokenEnv} in the agent's environment (never written to the file)`);
      break;
    }
    case 'uninstall': {
      if (!existsSync(path)) {
        say(`no ${path}: nothing to remove`);
        break;
      }
      const settings = readSettings(path);
      const n = removeRoostHooks(tool, settings);
      const telemetryOff = tool === 'claude-code' ? removeClaudeTelemetry(settings) : tool === 'gemini-cli' ? removeGeminiTelemetry(settings) : false;
      // The roost MCP server, wherever install put it.
      let mcpOff = false;
      if (tool === 'claude-code') {
        mcpOff = removeClaudeMcpSettings(settings);
        const file = claudeMcpPath(!!values.user, project, home);
        if (existsSync(file)) {
          const holder = readSettings(file);
          if (removeMcpServer(holder)) {
            mcpOff = true;
            if (!values.user && Object.keys(holder).length === 0) rmSync(file);
            else writeSettings(file, holder);
          }
        }
      } else if (tool === 'gemini-cli') mcpOff = removeMcpServer(settings);
      else if (tool === 'codex') {
        const cfg = codexConfigPath(path);
        const r = removeCodexMcp(readText(cfg));
        if (r.removed) {
          writeText(cfg, r.text);
          mcpOff = true;
        }
      }
      if (n > 0 || telemetryOff || mcpOff) writeSettings(path, settings);
      say(n > 0 ? `removed ${n} roost hook${n === 1 ? '' : 's'} from ${path}` : `no roost hooks in ${path}`);
      if (tool === 'codex') {
        const cfg = codexConfigPath(path);
        const r = removeCodexTelemetry(readText(cfg));
        if (r.removed) {
          writeText(cfg, r.text);
          say(`telemetry: off (Roost's [otel] block removed from ${cfg})`);
        }
      } else if (telemetryOff) say('telemetry: off');
      if (mcpOff) say('mcp: roost unregistered');
      break;
    }
    case 'status': {
      const settings = existsSync(path) ? readSettings(path) : {};
      const events: string[] = [];
      let server: string | undefined;
      let approvals: string | undefined;
      for (const [event, list] of Object.entries((settings.hooks ?? {}) as Json)) {
        if (!Array.isArray(list)) continue;
        const handlers = tool === 'cursor' ? list : list.flatMap((g: any) => (Array.isArray(g?.hooks) ? g.hooks : []));
        const ours = handlers.filter((h: unknown) => isRoostHandler(tool, h));
        if (!ours.length) continue;
        events.push(event);
        for (const h of ours) {
          const text = String(h.url ?? h.command ?? '');
          server ??= /^(https?:\/\/[^/]+)/.exec(String(h.url ?? ''))?.[1] ?? /--server (\S+)/.exec(text)?.[1];
          approvals ??= /--approvals ('(?:[^']|'\\'')*'|\S+)/.exec(text)?.[1]?.replace(/^'|'$/g, '');
        }
      }
      if (!events.length) {
        say(`roost hooks: not installed for ${tool} in ${path}`);
        break;
      }
      say(`roost hooks: installed for ${tool} in ${path}`);
      say(`  events:    ${events.join(', ')}`);
      say(`  approvals: ${approvals ?? 'off'}`);
      if (server) {
        let reach = 'unreachable';
        try {
          const r = await fetch(server + '/health', { signal: AbortSignal.timeout(1500) });
          reach = r.ok ? 'reachable' : `answered ${r.status}`;
        } catch {}
        say(`  server:    ${server} (${reach})`);
      }
      break;
    }
    default:
      throw new Error(`unknown hooks action "${action}"\n\n${USAGE}`);
  }
  const text = lines.join('\n') + '\n';
  process.stdout.write(text);
  return text;
}
