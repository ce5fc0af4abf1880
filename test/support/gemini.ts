// Runs the real Gemini CLI (the `@google/gemini-cli` dev dependency) headless,
// `gemini -p PROMPT --output-format stream-json`, against the Gemini API
// stand-in (test/support/gemini-standin.ts), in a temp HOME and project.
//
// The setup a person would make once, in the temp HOME: the API-key auth type
// selected (`security.auth.selectedType`; the CLI refuses a bare custom base
// URL otherwise: "Invalid auth method selected"), the project folder trusted
// (`~/.gemini/trustedFolders.json`; headless runs in an untrusted folder
// stop), usage statistics off. The model is fixed (`-m`): the default `auto`
// first asks a classifier model which model to use. `--approval-mode yolo`:
// the CLI's own confirmations off, so Roost's BeforeTool hook is the gate
// (a hook can deny or ask, never overrule the CLI's own policy).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/server/index.js';
import { tempDir } from './server.js';

export const GEMINI_JS = join(PACKAGE_ROOT, 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');

export function geminiAvailable(): boolean {
  return existsSync(GEMINI_JS);
}

export interface GeminiSetup {
  home: string;
  project: string;
}

export function geminiSetup(name = 'shop'): GeminiSetup {
  const home = tempDir('roost-gemini-home-');
  const project = join(tempDir('roost-gemini-proj-'), name);
  mkdirSync(join(home, '.gemini'), { recursive: true });
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(home, '.gemini', 'settings.json'),
    JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, privacy: { usageStatisticsEnabled: false }, general: { disableAutoUpdate: true } }, null, 2),
  );
  writeFileSync(join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [project]: 'TRUST_FOLDER' }, null, 2));
  return { home, project };
}

export interface GeminiRun {
  code: number | null;
  /** The stream-json lines, parsed. */
  events: any[];
  stderr: string;
  ms: number;
  sessionId: string | undefined;
}

export function runGemini(setup: GeminiSetup, modelUrl: string, prompt: string, opts: { timeoutMs?: number; args?: string[]; model?: string; env?: Record<string, string> } = {}): Promise<GeminiRun> {
  const t0 = Date.now();
  const args = [GEMINI_JS, '-p', prompt, '--output-format', 'stream-json', '-m', opts.model ?? 'gemini-2.5-flash', '--approval-mode', 'yolo', ...(opts.args ?? [])];
  return new Promise((ok) => {
    const c = spawn(process.execPath, args, {
      cwd: setup.project,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: setup.home,
        GOOGLE_GEMINI_BASE_URL: modelUrl,
        GEMINI_API_KEY: 'test',
        // One process instead of a parent that relaunches itself with a bigger heap.
        GEMINI_CLI_NO_RELAUNCH: 'true',
        ...(opts.env ?? {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    const kill = setTimeout(() => c.kill('SIGKILL'), opts.timeoutMs ?? 150_000);
    c.on('exit', (code) => {
      clearTimeout(kill);
      const events = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => {
          try {
            return JSON.parse(l);
          } catch {
            return { unparsed: l };
          }
        });
      ok({ code, events, stderr: err, ms: Date.now() - t0, sessionId: events.find((e) => e.type === 'init')?.session_id });
    });
  });
}
