// `roost hooks install --mcp` registers `roost mcp` (src/cli/mcp.ts) with each
// agent tool that takes MCP servers, under the name `roost`; `uninstall`
// takes it out again.
//
//   claude-code  project: `.mcp.json` `mcpServers.roost` at the project root,
//                plus `enabledMcpjsonServers: ["roost"]` (loads without the
//                "use this project's MCP servers?" prompt) and
//                `permissions.allow: ["mcp__roost"]` (Roost's four tools run
//                without a permission prompt: they only report, and
//                ask_person is itself a question to a person) in
//                `.claude/settings.json`; Claude Code applies a project's
//                permission rules only once the person has trusted the
//                folder (its first interactive run asks);
//                user (--user): `mcpServers.roost` in `~/.claude.json` (Claude
//                Code's user scope) and the same allow rule in
//                `~/.claude/settings.json`
//   codex        `[mcp_servers.roost]` in config.toml beside hooks.json,
//                between Roost's marker comments (like the [otel] block)
//   gemini-cli   `mcpServers.roost` in the same settings.json as the hooks
//   cursor       not registered here (Cursor's CLI cannot be run in the tests)
//
// Which entry is Roost's: a `roost` server whose args run `roost.js mcp`. A
// `roost` entry the person wrote themselves is left alone and reported.

import { parse as parseToml } from 'smol-toml';

type Json = Record<string, any>;

export interface McpEntryOptions {
  server: string;
  team?: string;
  tokenEnv?: string;
  node: string;
  /** bin/roost.js of this package. */
  script: string;
}

export const MCP_NAME = 'roost';
/** Claude Code's permission rule for every tool of the `roost` server. */
export const CLAUDE_MCP_RULE = 'mcp__roost';

export function mcpEntry(o: McpEntryOptions): { command: string; args: string[] } {
  return { command: o.node, args: [o.script, 'mcp', '--server', o.server, ...(o.team ? ['--team', o.team] : []), ...(o.tokenEnv ? ['--token-env', o.tokenEnv] : [])] };
}

export function isRoostMcp(v: unknown): boolean {
  if (!v || typeof v !== 'object') return false;
  const args = (v as Json).args;
  return Array.isArray(args) && args.length >= 2 && typeof args[0] === 'string' && /roost\.js$/.test(args[0]) && args[1] === 'mcp';
}

const obj = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** Puts Roost's entry into `holder.mcpServers` (in place); returns what it said. */
export function addMcpServer(holder: Json, entry: Json): string {
  const servers: Json = obj(holder.mcpServers) ? holder.mcpServers : (holder.mcpServers = {});
  if (servers[MCP_NAME] !== undefined && !isRoostMcp(servers[MCP_NAME])) return 'mcp: left as it is (a server named roost is already there and is not Roost’s)';
  servers[MCP_NAME] = entry;
  return 'mcp: roost registered';
}

/** Takes Roost's entry out of `holder.mcpServers` (in place); whether it was there. */
export function removeMcpServer(holder: Json): boolean {
  const servers = holder.mcpServers;
  if (!obj(servers) || !isRoostMcp(servers[MCP_NAME])) return false;
  delete servers[MCP_NAME];
  if (Object.keys(servers).length === 0) delete holder.mcpServers;
  return true;
}

/** Claude Code settings: load the project's `roost` server without a prompt, and let its tools run. */
export function addClaudeMcpSettings(settings: Json, project: boolean): void {
  if (project) {
    const on: unknown[] = Array.isArray(settings.enabledMcpjsonServers) ? settings.enabledMcpjsonServers : (settings.enabledMcpjsonServers = []);
    if (!on.includes(MCP_NAME)) on.push(MCP_NAME);
  }
  const perms: Json = obj(settings.permissions) ? settings.permissions : (settings.permissions = {});
  const allow: unknown[] = Array.isArray(perms.allow) ? perms.allow : (perms.allow = []);
  if (!allow.includes(CLAUDE_MCP_RULE)) allow.push(CLAUDE_MCP_RULE);
}

export function removeClaudeMcpSettings(settings: Json): boolean {
  let changed = false;
  if (Array.isArray(settings.enabledMcpjsonServers) && settings.enabledMcpjsonServers.includes(MCP_NAME)) {
    settings.enabledMcpjsonServers = settings.enabledMcpjsonServers.filter((x: unknown) => x !== MCP_NAME);
    if (settings.enabledMcpjsonServers.length === 0) delete settings.enabledMcpjsonServers;
    changed = true;
  }
  const perms = settings.permissions;
  if (obj(perms) && Array.isArray(perms.allow) && perms.allow.includes(CLAUDE_MCP_RULE)) {
    perms.allow = perms.allow.filter((x: unknown) => x !== CLAUDE_MCP_RULE);
    if (perms.allow.length === 0) delete perms.allow;
    if (Object.keys(perms).length === 0) delete settings.permissions;
    changed = true;
  }
  return changed;
}

// ---------------------------------------------------------------- Codex (config.toml [mcp_servers.roost])

const BEGIN = '# roost: the roost MCP server (`roost hooks uninstall --tool codex` removes this block)';
const END = '# roost: end of mcp';

function tomlString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/**
 * `text` without the block between `begin` and `end` (marker lines included);
 * what was before and after it joins with one blank line, so taking blocks
 * out and putting them back in any order gives the same text.
 */
export function removeMarkedBlock(text: string, begin: string, end: string): string {
  const i = text.indexOf(begin);
  if (i < 0) return text;
  const j = text.indexOf(end, i);
  if (j < 0) return text;
  const before = text.slice(0, i).replace(/\s*$/, '');
  const after = text.slice(j + end.length).replace(/^\s*/, '');
  const out = before && after ? `${before}\n\n${after}` : before || after;
  return out ? out.replace(/\s*$/, '') + '\n' : '';
}

const removeBlock = (text: string) => removeMarkedBlock(text, BEGIN, END);

export function addCodexMcp(text: string, entry: { command: string; args: string[] }): { text: string; said: string } {
  const without = removeBlock(text);
  let parsed: Json;
  try {
    parsed = parseToml(without);
  } catch (e) {
    return { text, said: `mcp: left as it is (config.toml is not valid TOML: ${(e as Error).message.split('\n')[0]})` };
  }
  if (obj(parsed.mcp_servers) && parsed.mcp_servers[MCP_NAME] !== undefined) return { text, said: 'mcp: left as it is (config.toml already has [mcp_servers.roost])' };
  const block = [BEGIN, `[mcp_servers.${MCP_NAME}]`, `command = ${tomlString(entry.command)}`, `args = [${entry.args.map(tomlString).join(', ')}]`, END].join('\n');
  const body = without.replace(/\s*$/, '');
  return { text: (body ? body + '\n\n' : '') + block + '\n', said: 'mcp: roost registered' };
}

export function removeCodexMcp(text: string): { text: string; removed: boolean } {
  const out = removeBlock(text);
  return { text: out, removed: out !== text };
}
