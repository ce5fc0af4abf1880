// What the approval and trust tests share: Claude Code's recorded PreToolUse
// of Bash (as its fail-closed command hook posts it, held with `hold=1`), a
// JSON POST, and two nodes over one fresh PostgreSQL schema.
import { after, before } from 'node:test';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshSchema } from './pg.js';
import { child, type ChildServer } from './server.js';

/** The real Claude Code 2.1.197's PreToolUse of a Bash call. */
export const PRE_BASH = JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'claude-code', 'hooks-real-2.1.197', '09-PreToolUse-Bash.json'), 'utf8')) as Record<string, unknown>;

/** The hook's query for a Bash call held for a person (team alpha unless said). */
export const holdQuery = (team = 'alpha', windowMs = 120_000) => `/hooks/claude-code?approvals=Bash&window=${windowMs}&hold=1&team=${team}`;

export async function postJson(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}

/** One held Bash call of `command` to the server at `url` (`query`: holdQuery()'s by default); resolves with the hook's answer. */
export async function holdBash(url: string, command: string, query = holdQuery()): Promise<any> {
  return (await postJson(url + query, { ...PRE_BASH, tool_input: { command }, tool_use_id: `toolu_${Math.random().toString(36).slice(2)}` })).json;
}

export interface TwoNodes {
  a: ChildServer;
  b: ChildServer;
  db: ReturnType<typeof freshSchema>;
}

/**
 * Inside a describe: two Roost nodes over one fresh schema, started before
 * its tests (when PostgreSQL is reachable) and killed and dropped after.
 * A test may replace a node (a restart) by assigning it.
 */
export function twoPgNodes(schema: string, reachable: boolean): TwoNodes {
  const nodes = { db: freshSchema(schema) } as TwoNodes;
  before(async () => {
    if (!reachable) return;
    [nodes.a, nodes.b] = await Promise.all([child({ args: ['--db', nodes.db.url] }), child({ args: ['--db', nodes.db.url] })]);
  });
  after(async () => {
    for (const s of [nodes.a, nodes.b]) await s?.stop('SIGKILL');
    if (reachable) await nodes.db.drop();
  });
  return nodes;
}
