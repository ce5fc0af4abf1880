// Runs the real Claude Code CLI (the `@anthropic-ai/claude-code` dev
// dependency) headless against a model stand-in, in a temp HOME and project.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
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

/** `claude -p PROMPT --output-format stream-json --verbose`, with the model at `modelUrl`. */
export function runClaude(setup: ClaudeSetup, modelUrl: string, prompt: string, opts: { timeoutMs?: number; args?: string[] } = {}): Promise<ClaudeRun> {
  const t0 = Date.now();
  return new Promise((ok) => {
    const c = spawn(CLAUDE_BIN, ['-p', prompt, '--output-format', 'stream-json', '--verbose', ...(opts.args ?? [])], {
      cwd: setup.project,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: setup.home,
        ANTHROPIC_BASE_URL: modelUrl,
        ANTHROPIC_API_KEY: 'test',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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
}
