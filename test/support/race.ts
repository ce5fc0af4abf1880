// What the two racing-decision suites share (bridge.decisions.claude on one
// node, bridge.decisions.pg.claude on two): the board thread the bridge
// follows, the two decision paths (the one decide endpoint and the board's
// own `session.approval` post), readers of the approvals and the board, the
// model's script of one Bash call per round, and the rounds' paths.
import { answer } from './server.js';
import { step, text, toolUse, hasResult, and, not, offersTool, askedWithBash as asked, type Step } from './model-standin.js';

export const THREAD = 'crew';

/** Rounds of a race. */
export const RACES = 8;
/** Which path each of the two racing decisions takes, round by round. */
export const PATHS: ['one' | 'board', 'one' | 'board'][] = [
  ['one', 'one'],
  ['board', 'board'],
  ['one', 'board'],
  ['board', 'one'],
];

/** A post to the board of THREAD (`path`: '' or '/requests') as the member `name`. */
export async function board(url: string, body: unknown, name: string, path = ''): Promise<{ status: number; json: any }> {
  return answer(await fetch(`${url}/fleet/${THREAD}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'roost-name': name }, body: JSON.stringify(body) }));
}

/** An answer and when it arrived (performance.now()). */
export interface TimedAnswer {
  status: number;
  json: any;
  at: number;
}

/** A decision through one of the two paths, as a request ready to leave (`go()` sends it). */
export function decision(url: string, path: 'one' | 'board', a: { id: string; scope: { rid: string } }, allow: boolean, by: string): { go(): Promise<TimedAnswer> } {
  const [target, init]: [string, RequestInit] =
    path === 'one'
      ? [`${url}/approvals/${encodeURIComponent(a.id)}/decision`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: allow ? 'allow' : 'deny', by }) }]
      : [`${url}/fleet/${THREAD}`, { method: 'POST', headers: { 'content-type': 'application/json', 'roost-name': by }, body: JSON.stringify({ type: 'session.approval', id: 's1', rid: a.scope.rid, state: allow ? 'allowed' : 'denied' }) }];
  return {
    go: async () => {
      const r = await fetch(target, init);
      const at = performance.now();
      return { ...(await answer(r)), at };
    },
  };
}

/** The pending approvals and the newest closed ones. */
export async function approvals(url: string): Promise<{ pending: any[]; recent: any[] }> {
  return (await fetch(`${url}/approvals?recent=100`)).json() as Promise<{ pending: any[]; recent: any[] }>;
}

/** Session s1's approval `rid` as the board shows it. */
export async function boardApproval(url: string, rid: string): Promise<any> {
  const b = (await (await fetch(`${url}/fleet/${THREAD}`)).json()) as { sessions: { id: string; approvals: { rid: string }[] }[] };
  return b.sessions.find((s) => s.id === 's1')?.approvals.find((a) => a.rid === rid);
}

/** The bridge's environment: its own HOME, the model stand-in, nothing else. */
export const ENV = (home: string, model: string) => ({ HOME: home, ANTHROPIC_BASE_URL: model, ANTHROPIC_API_KEY: 'test', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' });

/** The model's script: after `prompt`, one Bash call `touch ran-<i>` per round (tool_use ids `id(i)`), then a closing text. */
export function raceScript(prompt: string, id: (i: number) => string): Step[] {
  return [
    ...Array.from({ length: RACES }, (_, i) =>
      step(toolUse('Bash', { command: `touch ran-${i}`, description: `race ${i}` }, id(i)), i === 0 ? and(asked(prompt), not(hasResult(id(0)))) : and(offersTool('Bash'), hasResult(id(i - 1)), not(hasResult(id(i))))),
    ),
    step(text('All raced.'), and(offersTool('Bash'), hasResult(id(RACES - 1)))),
  ];
}
