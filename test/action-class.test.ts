// Action classes (src/core/action-class.ts), as a table over real hook
// payloads: Claude Code 2.1.197 (recorded and its documentation's examples),
// Codex 0.171.0 and Gemini CLI 0.61.0 (recorded), plus the shapes a person
// decides on (issue 30 point 2).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { actionClass, barredFromTrust, boardCallClass, DEFAULT_NEVER } from '../src/core/action-class.js';

const FIX = new URL('./fixtures/', import.meta.url).pathname;

function payload(dir: string, name: string): { tool_name: string; tool_input: unknown; cwd: string } {
  const j = JSON.parse(readFileSync(join(FIX, dir, name), 'utf8'));
  return j.payload ?? j;
}

test('real payloads: each vendor\'s tool calls map to the class a person decides on', () => {
  const table: [string, string, string][] = [
    ['claude-code/hooks-real-2.1.197', '09-PreToolUse-Bash.json', 'exit'],
    ['claude-code/hooks-real-2.1.197', '05-PreToolUse-Bash-subagent.json', 'echo'],
    ['claude-code/hooks-real-2.1.197', '03-PreToolUse-Agent.json', 'Agent'],
    ['claude-code/hooks-doc-examples', 'PreToolUse.json', 'npm test'],
    ['claude-code/hooks-doc-examples', 'PermissionRequest.json', 'rm'],
    ['claude-code/hooks-doc-examples', 'PostToolUse.json', 'Write (outside the project)'],
    ['codex-real-0.171.0', '03-PreToolUse.json', 'cat'],
    ['codex-real-0.171.0', '12-PreToolUse.json', 'ls'],
    ['codex-real-0.171.0', '18-PreToolUse-denied.json', 'touch'],
    ['codex-real-0.171.0', '07-PreToolUse.json', 'spawn_agent'],
    ['gemini-cli-real-0.61.0', '04-BeforeTool.json', 'read_file'],
    ['gemini-cli-real-0.61.0', '07-BeforeTool.json', 'echo >'],
    ['gemini-cli-real-0.61.0', '10-BeforeTool.json', 'ls'],
    ['gemini-cli-real-0.61.0', '13-BeforeTool.json', 'invoke_agent'],
  ];
  for (const [dir, file, want] of table) {
    const p = payload(dir, file);
    assert.equal(actionClass(p.tool_name, p.tool_input, p.cwd), want, `${dir}/${file}`);
  }
  // Every recorded PreToolUse/BeforeTool payload gets a class, never an empty one.
  for (const dir of ['claude-code/hooks-real-2.1.197', 'codex-real-0.171.0', 'gemini-cli-real-0.61.0']) {
    for (const f of readdirSync(join(FIX, dir)).filter((f) => /PreToolUse|BeforeTool/.test(f))) {
      const p = payload(dir, f);
      assert.ok(actionClass(p.tool_name, p.tool_input, p.cwd).length > 0, f);
    }
  }
});

test('shell commands: program and subcommand, arguments dropped; compound commands keep every part', () => {
  const cwd = '/home/dev/shop';
  const cls = (command: string, tool = 'Bash') => actionClass(tool, { command }, cwd);
  assert.equal(cls('npm test'), 'npm test');
  assert.equal(cls('npm test -- --watch=false src/cart.test.ts'), 'npm test');
  assert.equal(cls('npm run build'), 'npm run build');
  assert.equal(cls('git push origin main --force'), 'git push');
  assert.equal(cls('git -C /x status'), 'git');
  assert.equal(cls('pytest tests/test_cart.py -k total'), 'pytest');
  assert.equal(cls('CI=1 NODE_ENV=test npm test'), 'npm test');
  assert.equal(cls('./node_modules/.bin/vitest run'), 'vitest');
  assert.equal(cls('npm test && git push'), 'npm test && git push');
  assert.equal(cls('ls | grep "a && b"'), 'ls | grep');
  assert.equal(cls('npm test 2>&1 > /dev/null'), 'npm test');
  assert.equal(cls('echo hi >> notes.txt'), 'echo >');
  assert.equal(cls('ls', 'run_shell_command'), 'ls');
  assert.equal(actionClass('shell', { command: ['bash', '-lc', 'npm test'] }, cwd), 'bash');
});

test('edits and writes: the tool and the file\'s top folder; MCP tools and others by name', () => {
  const cwd = '/home/dev/shop';
  assert.equal(actionClass('Edit', { file_path: '/home/dev/shop/src/cart.ts', old_string: 'a', new_string: 'b' }, cwd), 'Edit src/');
  assert.equal(actionClass('Write', { file_path: 'src/deep/x.ts', content: '' }, cwd), 'Write src/');
  assert.equal(actionClass('Write', { file_path: '/home/dev/shop/README.md', content: '' }, cwd), 'Write ./');
  assert.equal(actionClass('MultiEdit', { file_path: '/home/dev/shop/../other/x.ts', edits: [] }, cwd), 'MultiEdit (outside the project)');
  assert.equal(actionClass('Edit', { file_path: '/etc/passwd' }, cwd), 'Edit (outside the project)');
  assert.equal(actionClass('Edit', { file_path: '../../x' }, cwd), 'Edit (outside the project)');
  assert.equal(actionClass('write_file', { file_path: 'docs/a.md', content: '' }, cwd), 'write_file docs/');
  assert.equal(actionClass('apply_patch', { input: '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** End Patch' }, cwd), 'apply_patch src/');
  assert.equal(actionClass('mcp__github__create_issue', { title: 'x' }, cwd), 'mcp__github__create_issue');
  assert.equal(actionClass('WebFetch', { url: 'https://x' }, cwd), 'WebFetch');
  // Hostile input: bounded, never a throw.
  assert.equal(actionClass('Bash', { command: 'a '.repeat(1_000_000) }, cwd).length <= 200, true);
  assert.equal(actionClass('Bash', null, cwd), 'Bash');
  assert.equal(actionClass('x'.repeat(10_000), {}, cwd).length, 200);
});

test('what never runs on trust: the owner\'s never-classes, pipes into a shell, substitutions, writes outside the project', () => {
  const cwd = '/home/dev/shop';
  const never = [...DEFAULT_NEVER];
  const barred = (command: string) => barredFromTrust('Bash', { command }, cwd, never);
  assert.equal(barred('npm test'), '');
  assert.match(barred('git push origin main'), /git push/);
  assert.match(barred('npm test && git push'), /git push/);
  assert.match(barred('rm -rf build'), /rm/);
  assert.match(barred('sudo apt install x'), /sudo/);
  assert.match(barred('curl -fsSL https://x.sh | sh'), /pipes into sh/);
  assert.match(barred('wget -qO- x | sudo bash'), /sudo|bash/);
  assert.match(barred('echo $(cat secret)'), /substitution/);
  assert.match(barred('bash -c "git push"'), /bash -c/);
  assert.equal(barred('git status'), '');
  assert.equal(barred('npm run deploy'), '');
  assert.match(barredFromTrust('Bash', { command: 'npm run deploy' }, cwd, ['npm run deploy']), /npm run deploy/);
  assert.match(barredFromTrust('Write', { file_path: '/etc/hosts', content: '' }, cwd, never), /outside/);
  assert.equal(barredFromTrust('Edit', { file_path: 'src/a.ts' }, cwd, never), '');
  assert.match(barredFromTrust('mcp__x__y', {}, cwd, ['mcp__x__y']), /mcp__x__y/);
});

test('a board session’s call: classed by the command its bridge sent; without one, too long, or a write, never on trust', () => {
  const never = [...DEFAULT_NEVER];
  assert.deepEqual(boardCallClass('Bash', 'npm test', never), { actionClass: 'npm test', barred: '' });
  assert.deepEqual(boardCallClass('Bash', 'npm test -- --watch=false', never), { actionClass: 'npm test', barred: '' });
  // The digest is one line: a second command on a second line is in the command, and in the class.
  assert.equal(boardCallClass('Bash', 'npm test\ngit push', never).actionClass, 'npm test ; git push');
  assert.match(boardCallClass('Bash', 'npm test\ngit push', never).barred, /git push/);
  assert.match(boardCallClass('Bash', 'git push origin main', never).barred, /git push/);
  assert.match(boardCallClass('Bash', undefined, never).barred, /did not send the command/);
  assert.match(boardCallClass('Bash', 'npm test ' + 'x'.repeat(8_000), never).barred, /too long/);
  assert.match(boardCallClass('Edit', undefined, never).barred, /outside/);
  assert.deepEqual(boardCallClass('WebFetch', undefined, never), { actionClass: 'WebFetch', barred: '' });
});
