// Which sub-agent a usage record belongs to when the record names only its
// type (Claude Code's OTLP `api_request` carries `agent.name` = the
// sub-agent's type, never its id; Gemini CLI likewise). Two sub-agents of the
// same type in one session must not share one roll-up (issue 31: a
// session's cost is its own and each of its sub-agents' calls), so the hooks
// tell this index when they saw each helper (its own id: Claude Code's
// `agent_id`), and a record goes to the helper of its type whose window
// (first hook .. last hook) holds the record's time; else to the one started
// last before it (it is running, its last hook not in yet); else, a record
// older than every helper's first hook, to the first one.
//
// The record's time is the CLI's clock and the windows the server's: on one
// machine they agree; a large skew, or two helpers of one type running at the
// same moment, can still put a request on the other one (the session's total
// is right either way). Bounded: SESSIONS keys, HELPERS windows per key
// (oldest let go).

const SESSIONS = 20_000;
const HELPERS = 64;

interface Window {
  agent: string;
  from: number;
  to: number;
}

export class HelperWindows {
  private m = new Map<string, Window[]>();

  /** A hook about helper `agent` (of session and type `key`) arrived at `at`. */
  seen(key: string, agent: string, at: number): void {
    let list = this.m.get(key);
    if (!list) {
      list = [];
      this.m.set(key, list);
      if (this.m.size > SESSIONS) this.m.delete(this.m.keys().next().value as string);
    }
    const w = list.find((x) => x.agent === agent);
    if (w) {
      w.to = Math.max(w.to, at);
      return;
    }
    list.push({ agent, from: at, to: at });
    if (list.length > HELPERS) list.shift();
  }

  /** The helper of `key` that a record made at `ts` belongs to, if the hooks saw any. */
  pick(key: string, ts: number): string | undefined {
    const list = this.m.get(key);
    if (!list || list.length === 0) return undefined;
    let inside: Window | undefined;
    let before: Window | undefined;
    let first: Window = list[0];
    for (const w of list) {
      if (w.from < first.from) first = w;
      if (!(ts > 0)) continue;
      if (w.from <= ts && ts <= w.to && (!inside || w.from > inside.from)) inside = w;
      if (w.from <= ts && (!before || w.from > before.from)) before = w;
    }
    if (!(ts > 0)) return list.reduce((a, b) => (b.from >= a.from ? b : a)).agent;
    return (inside ?? before ?? first).agent;
  }
}
