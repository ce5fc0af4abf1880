// Runs the real Claude Code CLI (the `@anthropic-ai/claude-code` dev
// dependency) headless against a model stand-in, in a temp HOME and project.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/server/index.js';
import { tempDir } from './server.js';

export const CLAUDE_BIN = join(PACKAGE_ROOT, 'node_modules', '.bin', 'claude');

/** Whether the CLI is installed and runs (`claude --version`). */
export function claudeAvailable(): boolean {
  return existsSync(CLAUDE_BIN);
}

export interface ClaudeRun {
  code: number | null;
  /** The stream-json lines, parsed. */
  messages: any[];
  stderr: string;
  ms: number;
}

export interface ClaudeSetup {
  home: string;
  project: string;
}

/** A temp HOME and a temp project folder named `name` (the floor's team). */
export function claudeSetup(name = 'shop'): ClaudeSetup {
  const home = tempDir('roost-claude-home-');
  const project = join(tempDir('roost-claude-proj-'), name);
  mkdirSync(project, { recursive: true });
  return { home, project };
}

/** The environment Claude Code runs in: the temp HOME, the model stand-in, no network. */
export function claudeEnv(setup: ClaudeSetup, modelUrl: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: setup.home,
    ANTHROPIC_BASE_URL: modelUrl,
    ANTHROPIC_API_KEY: 'test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
  };
}

/** A running `claude -p`: its process, and its run once it exits. */
export interface RunningClaude {
  proc: ChildProcess;
  done: Promise<ClaudeRun>;
}

/** `claude -p PROMPT --output-format stream-json --verbose`, with the model at `modelUrl`. */
export function spawnClaude(setup: ClaudeSetup, modelUrl: string, prompt: string, opts: { timeoutMs?: number; args?: string[] } = {}): RunningClaude {
  const t0 = Date.now();
  const c = spawn(CLAUDE_BIN, ['-p', prompt, '--output-format', 'stream-json', '--verbose', ...(opts.args ?? [])], {
    cwd: setup.project,
    env: claudeEnv(setup, modelUrl),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const done = new Promise<ClaudeRun>((ok) => {
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    const kill = setTimeout(() => c.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    c.on('exit', (code) => {
      clearTimeout(kill);
      const messages = out
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => {
          try {
            return JSON.parse(l);
          } catch {
            return { unparsed: l };
          }
        });
      ok({ code, messages, stderr: err, ms: Date.now() - t0 });
    });
  });
  return { proc: c, done };
}

export function runClaude(setup: ClaudeSetup, modelUrl: string, prompt: string, opts: { timeoutMs?: number; args?: string[] } = {}): Promise<ClaudeRun> {
  return spawnClaude(setup, modelUrl, prompt, opts).done;
}

/**
 * Interactive Claude Code (no `-p`) in a terminal: util-linux `script` gives
 * it a pseudo-terminal, and what is written to `proc.stdin` is typed into it
 * (`\x03` is Ctrl-C, delivered by the terminal as SIGINT to the foreground
 * process group). The temp HOME is set up so no first-run dialog shows.
 * Null when `script` is not installed.
 */
export function spawnInteractiveClaude(setup: ClaudeSetup, modelUrl: string, prompt: string): ChildProcess | null {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
  } catch {
    return null;
  }
  const key = 'sk-ant-test-0123456789abcdefghij';
  writeFileSync(
    join(setup.home, '.claude.json'),
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: 'dark',
      customApiKeyResponses: { approved: [key.slice(-20)], rejected: [] },
      projects: { [setup.project]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, allowedTools: [] } },
    }),
  );
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return spawn('script', ['-qfec', `${q(CLAUDE_BIN)} ${q(prompt)}`, '/dev/null'], {
    cwd: setup.project,
    env: { ...claudeEnv(setup, modelUrl), ANTHROPIC_API_KEY: key, TERM: 'xterm-256color' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}
