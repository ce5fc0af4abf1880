// Runs the real Codex CLI (the `@openai/codex` dev dependency, a native binary
// inside the package) headless, `codex exec --json`, against the Responses API
// stand-in (test/support/responses-standin.ts), in a temp HOME and project.
//
// The setup a person would make once, written into the temp CODEX_HOME's
// config.toml: a custom model provider pointing at the stand-in, and the
// project marked trusted (Codex loads a project's `.codex/` hooks and config
// only in a trusted project). Hooks Codex has not seen before must be reviewed
// in its TUI (`/hooks`) before they run; headless runs pass
// `--dangerously-bypass-hook-trust`, which Codex documents for automation
// that vets its hook sources itself (docs/integrations.md).
import { runJsonl } from './procs.js';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../src/server/index.js';
import { tempDir } from './server.js';

export const CODEX_BIN = join(PACKAGE_ROOT, 'node_modules', '.bin', 'codex');

export function codexAvailable(): boolean {
  return existsSync(CODEX_BIN);
}

export interface CodexSetup {
  home: string;
  codexHome: string;
  project: string;
}

/** Codex's own TOML string quoting (basic strings: backslash and quote escaped). */
function tq(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** A temp HOME whose Codex uses `modelUrl`, and a trusted project folder named `name`. */
export function codexSetup(modelUrl: string, name = 'shop', opts: { model?: string; extraConfig?: string } = {}): CodexSetup {
  const home = tempDir('roost-codex-home-');
  const codexHome = join(home, '.codex');
  const project = join(tempDir('roost-codex-proj-'), name);
  mkdirSync(codexHome, { recursive: true });
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(codexHome, 'config.toml'),
    [
      `model = ${tq(opts.model ?? 'gpt-standin')}`,
      'model_provider = "standin"',
      'check_for_update_on_startup = false',
      opts.extraConfig ?? '',
      '[model_providers.standin]',
      'name = "Stand-in"',
      `base_url = ${tq(modelUrl + '/v1')}`,
      'wire_api = "responses"',
      'env_key = "STANDIN_API_KEY"',
      `[projects.${tq(project)}]`,
      'trust_level = "trusted"',
      '',
    ].join('\n'),
  );
  return { home, codexHome, project };
}

export interface CodexRun {
  code: number | null;
  /** The `--json` event lines, parsed. */
  events: any[];
  stderr: string;
  ms: number;
  /** The thread (session) id Codex reported. */
  threadId: string | undefined;
}

/**
 * `codex exec --json PROMPT`. `approveForMe` routes Codex's approval prompts
 * through review (the headless way to reach PermissionRequest hooks: plain
 * `exec` runs with approvals off).
 */
export async function runCodex(setup: CodexSetup, prompt: string, opts: { timeoutMs?: number; args?: string[]; approveForMe?: boolean; env?: Record<string, string> } = {}): Promise<CodexRun> {
  const args = ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', ...(opts.approveForMe ? ['--approve-for-me'] : []), ...(opts.args ?? []), prompt];
  const env = { HOME: setup.home, CODEX_HOME: setup.codexHome, STANDIN_API_KEY: 'test', ...(opts.env ?? {}) };
  const r = await runJsonl(CODEX_BIN, args, { cwd: setup.project, env, timeoutMs: opts.timeoutMs ?? 120_000 });
  return { code: r.code, events: r.events, stderr: r.stderr + r.other, ms: r.ms, threadId: r.events.find((e) => e.type === 'thread.started')?.thread_id };
}
