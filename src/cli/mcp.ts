// `roost mcp`: Roost as a Model Context Protocol server over stdio, for any
// MCP-capable agent or script. It talks to a Roost server over HTTP only, as
// the agent's own desk on the floor:
//
//   report_status  { status, activity? }          the agent's status on the floor
//   send_message   { to?, nest?, text }           a paper plane to teammates on the floor,
//                                                 or a message into a flock nest
//   read_task      {}                             the team's whiteboard task
//   ask_person     { question, window? }          a yes-or-no question that waits in the
//                                                 approvals inbox; silence is a no
//
//   roost mcp [--server URL] [--agent ID] [--name NAME] [--team TEAM] [--token-env NAME]
//
// The agent is `--agent`, else the Claude Code session that started this
// server (CLAUDE_CODE_SESSION_ID: the session's own desk, `claude-code:<id>`),
// else `mcp:<folder>` of the working directory;
// its team `--team` (default the folder's name). In shared mode the token comes
// from the variable --token-env names (default ROOST_TOKEN), never a flag.
// stdout carries the protocol; anything said for people goes to stderr.

import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { VERSION } from '../server/package.js';
import { parseWindow } from '../core/window.js';
import { sessionAgentId } from '../integrations/index.js';

export interface McpOptions {
  server: string;
  agent: string;
  /** The agent's name on the floor; undefined keeps the name its hooks gave it. */
  name?: string;
  team: string;
  token?: string;
  /** The agent's source on the floor (`mcp`, or the tool whose session this is). */
  source?: string;
}

const STATUSES = ['idle', 'thinking', 'working', 'waiting', 'done', 'error'] as const;

type ToolResult = { content: { type: 'text'; text: string }[]; isError?: boolean };
const ok = (text: string): ToolResult => ({ content: [{ type: 'text', text }] });
const fail = (text: string): ToolResult => ({ content: [{ type: 'text', text }], isError: true });

/** Builds the MCP server (not yet connected): the tools and what they call. */
export function roostMcpServer(o: McpOptions): McpServer {
  const headers = { 'content-type': 'application/json', ...(o.token ? { authorization: `Bearer ${o.token}` } : {}) };
  const call = async (method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<{ status: number; json: any }> => {
    const r = await fetch(o.server + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    const text = await r.text();
    let json: any = null;
    try {
      json = JSON.parse(text);
    } catch {}
    return { status: r.status, json };
  };
  const said = (r: { status: number; json: any }) => `Roost said ${r.status}${r.json?.message ? ': ' + r.json.message : ''}`;
  const source = o.source ?? 'mcp';
  const me = { id: o.agent, ...(o.name ? { name: o.name } : {}), source };
  const server = new McpServer({ name: 'roost', version: VERSION });

  server.registerTool(
    'report_status',
    {
      title: 'Report status',
      description: 'Show your status and what you are doing on the Roost floor, where your team watches.',
      inputSchema: { status: z.enum(STATUSES), activity: z.string().max(280).optional().describe('one line: what you are doing') },
    },
    async ({ status, activity }) => {
      const r = await call('POST', '/events', { type: 'status', agent: me, team: o.team, source, status, ...(activity ? { activity } : {}) }).catch((e) => ({ status: 0, json: { message: String(e?.message ?? e) } }));
      return r.status === 200 ? ok(`status: ${status}${activity ? ' · ' + activity : ''}`) : fail(said(r));
    },
  );

  server.registerTool(
    'send_message',
    {
      title: 'Send a message',
      description: 'Send a message to teammates on the floor (agent ids in `to`; none means your parent), or into a flock nest (`nest`).',
      inputSchema: {
        text: z.string().min(1).max(2000),
        to: z.array(z.string().max(128)).max(20).optional(),
        nest: z.string().max(64).optional().describe('a flock nest id: the message goes there instead of the floor'),
      },
    },
    async ({ text, to, nest }) => {
      if (nest) {
        const r = await call('POST', `/api/nests/${encodeURIComponent(nest)}/messages`, { author: o.name, text }).catch((e) => ({ status: 0, json: { message: String(e?.message ?? e) } }));
        if (r.status === 201 || r.status === 200) return ok(`posted to nest ${nest}`);
        return fail(r.status === 404 ? `no nest "${nest}" on this Roost server (${said(r)})` : said(r));
      }
      const r = await call('POST', '/events', { type: 'message', agent: me, team: o.team, source, text, ...(to?.length ? { to } : {}) }).catch((e) => ({ status: 0, json: { message: String(e?.message ?? e) } }));
      return r.status === 200 ? ok(`sent${to?.length ? ' to ' + to.join(', ') : ''}`) : fail(said(r));
    },
  );

  server.registerTool(
    'read_task',
    { title: 'Read the team task', description: 'Read your team’s task from the whiteboard on the Roost floor.', inputSchema: {} },
    async () => {
      const r = await call('GET', '/state').catch((e) => ({ status: 0, json: { message: String(e?.message ?? e) } }));
      if (r.status !== 200) return fail(said(r));
      const team = (r.json?.teams ?? []).find((t: any) => t?.name === o.team || t?.id === o.team);
      return ok(team?.task ? String(team.task) : `no task on team ${o.team}'s whiteboard`);
    },
  );

  server.registerTool(
    'ask_person',
    {
      title: 'Ask a person',
      description:
        'Ask a person a yes-or-no question and wait for the answer. It waits in Roost’s approvals inbox; no answer within the window is a no.',
      inputSchema: { question: z.string().min(1).max(2000), window: z.string().max(10).optional().describe('how long to wait: 90s, 10m (default), 1h') },
    },
    async ({ question, window }, extra) => {
      const ms = window ? parseWindow(window) : undefined;
      if (window && ms === undefined) return fail(`window must be a duration like 90s, 10m or 1h, got ${window}`);
      const r = await call('POST', '/ask', { question, agent: o.agent, name: o.name ?? o.agent, team: o.team, source, ...(ms ? { window: ms } : {}) }, extra.signal).catch((e) => ({
        status: 0,
        json: { message: `Roost server at ${o.server} could not be reached (${e?.cause?.code ?? e?.message ?? e})` },
      }));
      // Fail safe: anything but an answer is a no.
      if (r.status !== 200 || (r.json?.answer !== 'yes' && r.json?.answer !== 'no')) return ok(`no (${said(r)}; without an answer the question counts as a no)`);
      return ok(`${r.json.answer}${r.json.reason ? ': ' + r.json.reason : ''} (${r.json.line ?? r.json.status})`);
    },
  );
  return server;
}

export async function mcpCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { server: { type: 'string' }, agent: { type: 'string' }, name: { type: 'string' }, team: { type: 'string' }, 'token-env': { type: 'string' } },
  });
  const folder = basename(process.cwd()) || 'mcp';
  const team = values.team ?? folder;
  // Started by Claude Code (which puts its session id in every MCP server's
  // environment): the tools act as that session's agent, the one its hooks
  // put on the floor, and keep the name the hooks gave it.
  const claudeSession = values.agent ? undefined : env.CLAUDE_CODE_SESSION_ID?.trim() || undefined;
  const agent = values.agent ?? (claudeSession ? sessionAgentId(claudeSession) : `mcp:${folder}`);
  const server = roostMcpServer({
    server: (values.server ?? env.ROOST_SERVER ?? 'http://127.0.0.1:4319').replace(/\/+$/, ''),
    agent,
    name: values.name ?? (claudeSession ? undefined : agent),
    source: claudeSession ? 'claude-code' : 'mcp',
    team,
    token: env[values['token-env'] ?? 'ROOST_TOKEN'] || undefined,
  });
  await server.connect(new StdioServerTransport());
  process.stderr.write(`roost mcp: serving ${agent} (team ${team}) over stdio\n`);
}
