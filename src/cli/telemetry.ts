// `roost hooks install` also turns each tool's OpenTelemetry export on toward
// Roost's OTLP receiver (POST /v1/logs), and `uninstall` turns it off again:
//
//   claude-code  the settings file's `env` block (Claude Code applies it to its
//                own process): CLAUDE_CODE_ENABLE_TELEMETRY, OTEL_LOGS_EXPORTER,
//                OTEL_EXPORTER_OTLP_LOGS_PROTOCOL, OTEL_EXPORTER_OTLP_LOGS_ENDPOINT
//   codex        an `[otel]` table in config.toml beside hooks.json (the
//                project's `.codex/config.toml`, read in a trusted project, or
//                `~/.codex/config.toml`), between two marker comments
//   gemini-cli   the `telemetry` object of the same settings.json as the hooks
//
// Only log records are asked for: they carry every request's tokens (and
// Claude Code's cost) with a key that makes a retried export harmless;
// metrics would say the same again (docs/integrations.md).
//
// What is Roost's: a value Roost wrote (the same endpoint URL shape); a value
// the person set themselves (an OTEL_* variable with another value, an
// `[otel]` table without Roost's markers, a telemetry object pointing
// elsewhere) is left alone and reported, never overwritten or removed.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { AgentTool } from '../integrations/index.js';
import { removeMarkedBlock } from './mcp-config.js';

type Json = Record<string, any>;

/** The endpoint every tool is pointed at (logs only). */
export function logsEndpoint(server: string): string {
  return `${server.replace(/\/+$/, '')}/v1/logs`;
}

const isRoostEndpoint = (v: unknown) => typeof v === 'string' && /^https?:\/\/[^/]+\/v1\/logs$/.test(v);

// ---------------------------------------------------------------- Claude Code (settings.json env)

function claudeEnv(server: string): Record<string, string> {
  return {
    CLAUDE_CODE_ENABLE_TELEMETRY: '1',
    OTEL_LOGS_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'http/protobuf',
    OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: logsEndpoint(server),
  };
}

/** Adds the telemetry variables to a Claude Code settings object (in place); returns what it said. */
export function addClaudeTelemetry(settings: Json, server: string): string {
  const env: Json = settings.env && typeof settings.env === 'object' && !Array.isArray(settings.env) ? settings.env : (settings.env = {});
  const mine = env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT === undefined || isRoostEndpoint(env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT);
  const want = claudeEnv(server);
  const clash = Object.entries(want).filter(([k, v]) => env[k] !== undefined && env[k] !== v && !(k === 'OTEL_EXPORTER_OTLP_LOGS_ENDPOINT' && mine));
  if (clash.length) return `telemetry: left as it is (${clash.map(([k]) => k).join(', ')} already set to something else)`;
  Object.assign(env, want);
  return `telemetry: on (log records to ${want.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT})`;
}

/** Takes Roost's telemetry variables out again (only while they still hold Roost's values). */
export function removeClaudeTelemetry(settings: Json): boolean {
  const env = settings.env;
  if (!env || typeof env !== 'object' || !isRoostEndpoint(env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT)) return false;
  const want = claudeEnv('http://x');
  for (const k of Object.keys(want)) if (k === 'OTEL_EXPORTER_OTLP_LOGS_ENDPOINT' || env[k] === want[k]) delete env[k];
  if (Object.keys(env).length === 0) delete settings.env;
  return true;
}

// ---------------------------------------------------------------- Gemini CLI (settings.json telemetry)

export function addGeminiTelemetry(settings: Json, server: string): string {
  const t = settings.telemetry;
  if (t && typeof t === 'object' && t.otlpEndpoint !== undefined && t.otlpEndpoint !== server.replace(/\/+$/, '')) {
    return 'telemetry: left as it is (telemetry.otlpEndpoint already points elsewhere)';
  }
  // Gemini CLI posts to <otlpEndpoint>/v1/logs (and /v1/metrics, /v1/traces) over http.
  settings.telemetry = { ...(t && typeof t === 'object' ? t : {}), enabled: true, target: 'local', otlpEndpoint: server.replace(/\/+$/, ''), otlpProtocol: 'http', logPrompts: false };
  return `telemetry: on (OTLP over http to ${settings.telemetry.otlpEndpoint})`;
}

export function removeGeminiTelemetry(settings: Json, server?: string): boolean {
  const t = settings.telemetry;
  if (!t || typeof t !== 'object' || t.target !== 'local' || t.otlpProtocol !== 'http' || typeof t.otlpEndpoint !== 'string') return false;
  if (server && t.otlpEndpoint !== server.replace(/\/+$/, '')) return false;
  delete settings.telemetry;
  return true;
}

// ---------------------------------------------------------------- Codex (config.toml [otel])

const BEGIN = '# roost: telemetry to Roost (`roost hooks uninstall --tool codex` removes this block)';
const END = '# roost: end';

export function codexConfigPath(hooksPath: string): string {
  return join(dirname(hooksPath), 'config.toml');
}

function tomlString(s: string): string {
  return `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** config.toml's text with Roost's [otel] block (added or replaced), or an explanation why not. */
export function addCodexTelemetry(text: string, server: string): { text: string; said: string } {
  const without = removeCodexBlock(text);
  let parsed: Json;
  try {
    parsed = parseToml(without);
  } catch (e) {
    return { text, said: `telemetry: left as it is (config.toml is not valid TOML: ${(e as Error).message.split('\n')[0]})` };
  }
  if (parsed.otel !== undefined) return { text, said: 'telemetry: left as it is (config.toml already has an [otel] table)' };
  const block = [
    BEGIN,
    '[otel]',
    'log_user_prompt = false',
    `exporter = { otlp-http = { endpoint = ${tomlString(logsEndpoint(server))}, protocol = "binary" } }`,
    END,
  ].join('\n');
  // A table goes last, so it cannot capture keys that belong to the file's top level.
  const body = without.replace(/\s*$/, '');
  return { text: (body ? body + '\n\n' : '') + block + '\n', said: `telemetry: on (log records to ${logsEndpoint(server)})` };
}

function removeCodexBlock(text: string): string {
  return removeMarkedBlock(text, BEGIN, END);
}

export function removeCodexTelemetry(text: string): { text: string; removed: boolean } {
  const out = removeCodexBlock(text);
  return { text: out, removed: out !== text };
}

export function readText(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

export const TELEMETRY_TOOLS: readonly AgentTool[] = ['claude-code', 'codex', 'gemini-cli'];
