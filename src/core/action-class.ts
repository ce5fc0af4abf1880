// Action classes (docs/approvals.md "Earned trust"): what a coding agent's
// tool call is, in words a person would decide on, so that trust is earned
// per class ("npm test", "git push", "Edit src/") and not per exact call.
//
// - a shell command: each program and its subcommand, arguments dropped
//   (`npm test`, `git push`, `pytest`); a compound command keeps every part
//   and its operator (`npm test && git push`), so trusting `npm test` never
//   lets a `git push` ride along; a redirection to a file adds ` >`;
// - an edit or a write: the tool and the file's top folder in the project
//   (`Edit src/`, `Write ./` for a file at the top), or `Edit (outside the
//   project)`;
// - an MCP tool: its name (`mcp__github__create_issue`);
// - anything else: the tool's name.
//
// `barredFromTrust` says why a call may never be allowed by trust, whatever
// its class earned: an owner's never-class (defaults `git push`, `rm`,
// `sudo`), a pipe into a shell (`curl … | sh`), a command substitution (what
// runs cannot be read off the command), a write outside the project's folder.
//
// Pure, no I/O; every input is hostile: strings are cut before any work and a
// class is at most CLASS_MAX characters.

export const CLASS_MAX = 200;
const COMMAND_MAX = 8_000;

const SHELL_TOOLS = new Set(['Bash', 'shell', 'run_shell_command', 'exec_command', 'local_shell']);
const FILE_TOOLS = new Set(['Edit', 'MultiEdit', 'Write', 'NotebookEdit', 'write_file', 'replace', 'apply_patch']);
/** Programs whose first word after them is a subcommand a person decides on. */
const SUBCOMMANDS = new Set([
  'npm', 'pnpm', 'yarn', 'bun', 'npx', 'git', 'cargo', 'go', 'docker', 'podman', 'kubectl', 'helm', 'terraform',
  'pip', 'pip3', 'poetry', 'uv', 'gh', 'make', 'deno', 'dotnet', 'mvn', 'gradle', 'brew', 'apt', 'apt-get',
  'systemctl', 'rails', 'bundle', 'composer', 'mix', 'swift', 'rustup', 'conda', 'az', 'aws', 'gcloud',
]);
/** `npm run build` and `npm run deploy` are different things to allow: the script stays. */
const RUNNERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);
/** Programs a pipe must never feed (`curl … | sh`). */
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'python', 'python3', 'perl', 'ruby', 'node', 'eval', 'source', '.']);
/** The default never-classes (docs/approvals.md); an owner may set others. */
export const DEFAULT_NEVER = ['git push', 'rm', 'sudo'] as const;

export interface ShellPart {
  /** The part's class: program and subcommand. */
  cls: string;
  /** The operator after it ('' for the last). */
  op: string;
}

/** Splits a command into its parts at `&&`, `||`, `;`, `|`, `&` and newlines, outside quotes; each part's words. */
function split(command: string): { words: string[]; op: string; redirect: boolean }[] {
  const parts: { words: string[]; op: string; redirect: boolean }[] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let redirect = false;
  let quote = '';
  const endWord = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endPart = (op: string) => {
    endWord();
    if (words.length || redirect) parts.push({ words, op, redirect });
    words = [];
    redirect = false;
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i];
    if (quote) {
      if (c === quote) quote = '';
      else if (c === '\\' && quote === '"' && i + 1 < command.length) word += command[++i];
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
      continue;
    }
    if (c === '\\' && i + 1 < command.length) {
      word += command[++i];
      inWord = true;
      continue;
    }
    if (c === ' ' || c === '\t') {
      endWord();
      continue;
    }
    const two = command.slice(i, i + 2);
    if (two === '&&' || two === '||') {
      endPart(two);
      i++;
      continue;
    }
    if (c === ';' || c === '\n' || c === '|' || c === '&') {
      // `2>&1` and `>&2` are redirections, not a background `&`.
      if (c === '&' && command[i - 1] === '>') continue;
      endPart(c === '\n' ? ';' : c);
      continue;
    }
    if (c === '>' || c === '<') {
      endWord();
      // `> file` writes a file: `2>&1` and `>/dev/null` do not.
      const rest = command.slice(i + 1).replace(/^>/, '').trimStart();
      if (c === '>' && !rest.startsWith('&') && !rest.startsWith('/dev/null')) redirect = true;
      // The target is not a word of the command.
      let j = i + 1;
      while (j < command.length && (command[j] === '>' || command[j] === '&' || command[j] === ' ')) j++;
      while (j < command.length && !' \t;|&\n'.includes(command[j])) j++;
      i = j - 1;
      continue;
    }
    word += c;
    inWord = true;
  }
  endPart('');
  return parts;
}

const ENV_ASSIGN = /^[A-Za-z_][A-Za-z0-9_]*=/;
const SUBCOMMAND = /^[a-z][a-z0-9:_-]*$/;

function base(program: string): string {
  const i = program.lastIndexOf('/');
  return i >= 0 ? program.slice(i + 1) : program;
}

/** A shell command's parts, each as program and subcommand (arguments dropped). */
export function shellParts(command: string): ShellPart[] {
  return split(command.slice(0, COMMAND_MAX)).map((p) => {
    let k = 0;
    while (k < p.words.length && ENV_ASSIGN.test(p.words[k])) k++;
    const program = base(p.words[k] ?? '');
    let cls = program;
    const sub = p.words[k + 1];
    if (SUBCOMMANDS.has(program) && sub !== undefined && SUBCOMMAND.test(sub)) {
      cls += ' ' + sub;
      const script = p.words[k + 2];
      if (RUNNERS.has(program) && sub === 'run' && script !== undefined && SUBCOMMAND.test(script)) cls += ' ' + script;
    }
    if (p.redirect) cls += cls ? ' >' : '>';
    return { cls, op: p.op };
  });
}

/** The file a file tool writes (Codex's `apply_patch` names it inside the patch). */
function fileOf(tool: string, o: Record<string, unknown>): string {
  const s = (k: string) => (typeof o[k] === 'string' ? (o[k]).slice(0, 4096) : '');
  if (tool === 'apply_patch') {
    const patch = s('input') || s('patch') || s('command');
    return /\*\*\* (?:Add|Update|Delete) File: ([^\n]+)/.exec(patch)?.[1]?.trim() ?? '';
  }
  return s('file_path') || s('path') || s('notebook_path') || s('absolute_path');
}

/** A path's place in the project at `cwd`: its top folder (`src/`, `./` for a file at the top), or null when outside. */
export function topFolder(path: string, cwd: string): string | null {
  const norm = (p: string) => {
    const out: string[] = [];
    for (const seg of p.split('/')) {
      if (seg === '' || seg === '.') continue;
      if (seg === '..') {
        if (out.length === 0) return null;
        out.pop();
      } else out.push(seg);
    }
    return out;
  };
  const abs = path.startsWith('/');
  const root = cwd ? norm(cwd) : [];
  const p = abs ? norm(path) : norm([...(root ?? []), ...path.split('/')].join('/'));
  if (!p || !root) return null;
  // A relative path with no project folder known is read from the project's top.
  if (abs && !cwd) return null;
  for (let i = 0; i < root.length; i++) if (p[i] !== root[i]) return null;
  const rest = p.slice(root.length);
  if (rest.length === 0) return null;
  return rest.length === 1 ? './' : rest[0] + '/';
}

function cut(s: string): string {
  return s.length > CLASS_MAX ? s.slice(0, CLASS_MAX - 1) + '…' : s;
}

function inputObject(input: unknown): Record<string, unknown> {
  return input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

/** The action class of a tool call (the file's header says how). */
export function actionClass(tool: string, input: unknown, cwd = ''): string {
  const name = String(tool ?? '').slice(0, CLASS_MAX);
  const o = inputObject(input);
  if (SHELL_TOOLS.has(name)) {
    const raw = o.command;
    const command = typeof raw === 'string' ? raw : Array.isArray(raw) ? raw.filter((w) => typeof w === 'string').slice(0, 64).join(' ') : '';
    const parts = shellParts(command);
    if (parts.length === 0) return cut(name);
    return cut(parts.map((p) => p.cls + (p.op ? ` ${p.op}` : '')).join(' '));
  }
  if (FILE_TOOLS.has(name)) {
    const file = fileOf(name, o);
    const dir = typeof o.cwd === 'string' ? o.cwd : cwd;
    const top = file ? topFolder(file, dir) : null;
    return cut(`${name} ${top ?? '(outside the project)'}`);
  }
  return cut(name || 'unknown');
}

/**
 * Why this call may never be allowed by trust ('' when it may): a part of its
 * class is one of `never` (a class or a program: `rm` bars `rm -rf x` and
 * `rm`), a pipe feeds a shell, a command substitution, or a write outside
 * the project's folder.
 */
export function barredFromTrust(tool: string, input: unknown, cwd: string, never: readonly string[]): string {
  const cls = actionClass(tool, input, cwd);
  if (cls.endsWith('(outside the project)')) return 'it writes outside the project\'s folder';
  const o = inputObject(input);
  if (SHELL_TOOLS.has(tool)) {
    const command = typeof o.command === 'string' ? o.command.slice(0, COMMAND_MAX) : '';
    if (/\$\(|`|<\(/.test(command)) return 'it runs a command substitution (what runs cannot be read off the command)';
    const parts = shellParts(command);
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      const program = p.cls.split(' ')[0];
      if (i > 0 && parts[i - 1].op === '|' && SHELLS.has(program)) return `it pipes into ${program}`;
      if (['sh', 'bash', 'zsh', 'eval'].includes(program) && i === 0 && / -c\b/.test(command)) return `it runs a script through ${program} -c`;
      for (const n of never) if (n && (p.cls === n || p.cls.startsWith(n + ' '))) return `"${n}" never runs on trust`;
    }
    return '';
  }
  for (const n of never) if (n && (cls === n || cls.startsWith(n + ' '))) return `"${n}" never runs on trust`;
  return '';
}

/**
 * A board session's call (docs/approvals.md "Earned trust", the fleet board):
 * its class and why it may never run on trust, from what its bridge posted.
 * A shell call is classed by the command the bridge sent beside its digest;
 * without one (an older bridge) it is barred, since the digest alone is one
 * line (a second line could hide any command). The board knows no project
 * folder, so a file tool's write counts as outside the project (barred).
 */
export function boardCallClass(tool: string, command: unknown, never: readonly string[]): { actionClass: string; barred: string } {
  const name = String(tool ?? '').slice(0, CLASS_MAX);
  const input = typeof command === 'string' ? { command: command.slice(0, COMMAND_MAX) } : {};
  const cls = actionClass(name, input, '');
  if (SHELL_TOOLS.has(name) && typeof command !== 'string') return { actionClass: cls, barred: 'the bridge did not send the command' };
  if (typeof command === 'string' && command.length > COMMAND_MAX) return { actionClass: cls, barred: 'the command is too long to read' };
  return { actionClass: cls, barred: barredFromTrust(name, input, '', never) };
}
