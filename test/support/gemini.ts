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
import { runJsonl } from './procs.js';
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

export async function runGemini(setup: GeminiSetup, modelUrl: string, prompt: string, opts: { timeoutMs?: number; args?: string[]; model?: string; env?: Record<string, string> } = {}): Promise<GeminiRun> {
  const args = [GEMINI_JS, '-p', prompt, '--output-format', 'stream-json', '-m', opts.model ?? 'gemini-2.5-flash', '--approval-mode', 'yolo', ...(opts.args ?? [])];
  const env = {
    HOME: setup.home,
    GOOGLE_GEMINI_BASE_URL: modelUrl,
    GEMINI_API_KEY: 'test',
    // One process instead of a parent that relaunches itself with a bigger heap.
    GEMINI_CLI_NO_RELAUNCH: 'true',
    ...(opts.env ?? {}),
  };
  const r = await runJsonl(process.execPath, args, { cwd: setup.project, env, timeoutMs: opts.timeoutMs ?? 150_000 });
  return { code: r.code, events: r.events, stderr: r.stderr, ms: r.ms, sessionId: r.events.find((e) => e.type === 'init')?.session_id };
}
