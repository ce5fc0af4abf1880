// Which tool calls need a person's approval: the rule a caller gives
// (`?approvals=` on a hook URL, `--approvals` of `roost hooks install` and of
// the bridge), matched against a tool name.
//
// The rule comes from a caller, and the hook path serves every project on
// one event loop, so it is never compiled into a RegExp (a rule such as
// `(a|a)+b` backtracks for seconds). The syntax is a small, closed subset of
// Claude Code's matcher syntax, matched without backtracking:
//
//   ''  off  none          no tool needs approval
//   all  *  .*             every tool
//   NAME                   exactly that tool (`Bash`); names are letters,
//                          digits, `_`, `-` and `:`
//   A|B|C                  any of them (`Edit|Write`)
//   `*` or `.*` in a name  any run of characters (`mcp__.*`, `mcp__github__*`,
//                          `Notebook*`)
//   !NAME                  never this one, even when another alternative
//                          matches (`!Read|!Grep`: every tool but those two; a
//                          rule of exclusions only starts from every tool)
//   (?!(?:A|B)$).*         the same as `!A|!B` (the bridge's default before
//                          this syntax existed, kept working)
//
// Anything else (parentheses, `+`, `?`, `[`, `\`, a lone `.`, an empty
// alternative, a rule over RULE_MAX_CHARS) is not understood, and a rule that
// is not understood needs approval for every tool: a typo must not switch
// approvals off (fail safe). So does a tool name over TOOL_MAX_CHARS.
//
// Cost: compiling is linear in the rule and happens once per distinct rule
// string (a small cache); matching is one left-to-right scan per literal
// piece of each alternative, with no backtracking, on a name of at most
// TOOL_MAX_CHARS.
//
// Pure: imports nothing, no clock, no I/O.

export const RULE_MAX_CHARS = 1000;
export const TOOL_MAX_CHARS = 200;

/** One alternative: literal pieces that must appear in order, with wildcards between them. */
interface Glob {
  /** The literal pieces, split at each wildcard. */
  parts: string[];
  /** Whether the name may have more before the first piece / after the last. */
  openStart: boolean;
  openEnd: boolean;
}

/** A compiled rule. `every`: needs approval for every tool (all, or a rule not understood). */
export type CompiledRule = { kind: 'none' } | { kind: 'every' } | { kind: 'match'; include: Glob[] | 'any'; exclude: Glob[] };

/** Letters, digits, `_`, `-`, `:`. */
function nameChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 58) || c === 95 || c === 45;
}
const LEGACY_PREFIX = '(?!(?:';
const LEGACY_SUFFIX = ')$).*';

/** Parses one alternative (`mcp__.*`); null when it is not in the syntax. */
function glob(alt: string): Glob | null {
  if (alt === '') return null;
  const parts: string[] = [];
  let cur = '';
  let openStart = false;
  let openEnd = false;
  for (let i = 0; i < alt.length; i++) {
    const c = alt[i];
    let wild = false;
    if (c === '*') wild = true;
    else if (c === '.' && alt[i + 1] === '*') {
      wild = true;
      i++;
    } else if (!nameChar(alt.charCodeAt(i))) return null;
    if (!wild) {
      cur += c;
      continue;
    }
    if (parts.length === 0 && cur === '') openStart = true;
    else if (cur !== '') parts.push(cur);
    cur = '';
    openEnd = true;
  }
  if (cur !== '') {
    parts.push(cur);
    openEnd = false;
  }
  return { parts, openStart, openEnd };
}

/** Compiles a rule string (see the header for the syntax). Linear in its length. */
export function compileRule(rules: string | undefined | null): CompiledRule {
  const r = (rules ?? '').trim();
  if (r === '' || r === 'off' || r === 'none') return { kind: 'none' };
  if (r === 'all' || r === '*' || r === '.*') return { kind: 'every' };
  if (r.length > RULE_MAX_CHARS) return { kind: 'every' };
  let source = r;
  let legacy = false;
  if (r.startsWith(LEGACY_PREFIX) && r.endsWith(LEGACY_SUFFIX) && r.length > LEGACY_PREFIX.length + LEGACY_SUFFIX.length) {
    source = r.slice(LEGACY_PREFIX.length, -LEGACY_SUFFIX.length);
    legacy = true;
  }
  const include: Glob[] = [];
  const exclude: Glob[] = [];
  for (const raw of source.split('|')) {
    let alt = raw.trim();
    const not = legacy || alt.startsWith('!');
    if (alt.startsWith('!')) alt = alt.slice(1).trim();
    if (legacy && alt.startsWith('!')) return { kind: 'every' };
    const g = glob(alt);
    if (!g) return { kind: 'every' };
    (not ? exclude : include).push(g);
  }
  return { kind: 'match', include: include.length ? include : 'any', exclude };
}

/** Whether `name` matches one alternative: each piece found once, left to right, never revisited. */
function matches(g: Glob, name: string): boolean {
  const { parts, openStart, openEnd } = g;
  if (parts.length === 0) return openStart || openEnd || name === ''; // `*` alone, or an empty name
  let at = 0;
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k];
    const first = k === 0;
    const last = k === parts.length - 1;
    if (first && !openStart) {
      if (!name.startsWith(p)) return false;
      at = p.length;
    } else if (last && !openEnd) {
      // The last piece is anchored at the end: it must fit after what is already matched.
      const from = name.length - p.length;
      if (from < at || !name.endsWith(p)) return false;
      at = name.length;
    } else {
      // The leftmost place is always right for a piece between wildcards: it
      // leaves the most of the name for the pieces after it.
      const i = name.indexOf(p, at);
      if (i < 0) return false;
      at = i + p.length;
    }
  }
  return openEnd || at === name.length;
}

/**
 * A Claude Code hook `matcher` that selects at least the tools the rule asks
 * about (`roost hooks install` puts it on the approval hook, whose script then
 * applies the rule itself): the rule with every wildcard written `.*`, or `*`
 * (every tool) for a rule with exclusions, which a matcher cannot say. Null for
 * a rule outside the syntax, or one that asks about nothing.
 */
export function claudeMatcher(rules: string): string | null {
  const c = compileRule(rules);
  const r = rules.trim();
  if (c.kind === 'none') return null;
  if (c.kind === 'every') return r === 'all' || r === '*' || r === '.*' ? '*' : null;
  if (c.exclude.length || c.include === 'any') return '*';
  return c.include
    .map((g) => (g.openStart ? '.*' : '') + g.parts.join('.*') + (g.openEnd && g.parts.length ? '.*' : ''))
    .join('|');
}

/** Whether a compiled rule asks for approval of `tool`. */
export function ruleMatches(rule: CompiledRule, tool: string): boolean {
  if (rule.kind === 'none') return false;
  if (rule.kind === 'every' || tool.length > TOOL_MAX_CHARS) return true;
  if (rule.exclude.some((g) => matches(g, tool))) return false;
  return rule.include === 'any' || rule.include.some((g) => matches(g, tool));
}

// A handful of distinct rules are in use at a time (one per installed hook
// setting or bridge). A caller sending a new rule per request only refills
// this bounded cache: when it is full it starts over (cheaper than keeping an
// order, and the rules in use are back after one call each).
const CACHE_MAX = 64;
const cache = new Map<string, CompiledRule>();

function cached(rules: string): CompiledRule {
  let c = cache.get(rules);
  if (c) return c;
  c = compileRule(rules);
  if (cache.size >= CACHE_MAX) cache.clear();
  cache.set(rules, c);
  return c;
}

/**
 * Whether `tool` needs approval under `rules` (the syntax is in this file's
 * header). A rule that is not understood needs approval for every tool.
 */
export function needsApproval(rules: string | undefined | null, tool: string): boolean {
  const r = rules ?? '';
  return ruleMatches(r.length > RULE_MAX_CHARS ? { kind: 'every' } : cached(r), tool);
}
