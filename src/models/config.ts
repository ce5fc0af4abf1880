// Which model serves which role: `roost serve --model <provider>:<model>[@baseURL]`
// for every role, and `--model-<role> ...` to override one (roles: sentry,
// crow, elder, quill, boss, banter, jev). The same from the environment as
// ROOST_MODEL and ROOST_MODEL_<ROLE> (a flag wins). Keys and base URLs come
// from the SDKs' own environment variables (ANTHROPIC_API_KEY,
// ANTHROPIC_BASE_URL, OPENAI_API_KEY, OPENAI_BASE_URL); a base URL in the
// spec wins over the environment's. docs/models.md has examples.

import { AnthropicProvider } from './anthropic.js';
import { OpenAIProvider, isOpenAIHosted } from './openai.js';
import { withRetries, type RetryOptions } from './retry.js';
import { DemoProvider, DEMO_MODEL_NAME } from './demo.js';
import type { ModelProvider } from './types.js';

export const MODEL_ROLES = ['sentry', 'crow', 'elder', 'quill', 'boss', 'banter', 'jev'] as const;
export type ModelRole = (typeof MODEL_ROLES)[number];

/** What each role does (for help texts and the flock view). */
export const ROLE_DUTIES: Record<ModelRole, string> = {
  sentry: 'triage of list items and the watchdog scores',
  crow: 'the working crows answering items and nest requests',
  elder: 'merging a murder of answers into one',
  quill: 'the assistant crow in nests',
  boss: 'spin-up orders',
  banter: 'one-line asides between crows',
  jev: 'the model-backed message tagger',
};

/** Where Ollama listens by default (its OpenAI-compatible API). */
export const OLLAMA_BASE_URL = 'http://127.0.0.1:11434/v1';

export interface ModelSpec {
  /** `demo`: the offline, scripted demo model (demo.ts), only ever named by `--model demo` or `--demo`. */
  provider: 'anthropic' | 'openai' | 'demo';
  model: string;
  baseURL?: string;
  /** A key the spec implies (Ollama's placeholder); real keys come from the environment. */
  apiKey?: string;
  /** The spec as written. */
  text: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/**
 * Parses `<provider>:<model>[@<base URL>]`. Providers: `anthropic`, `openai`
 * (any OpenAI-compatible server), and `ollama` (openai at Ollama's default
 * address unless a URL is given). A model name may itself contain `:` or `@`
 * (`ollama:llama3.1:8b`); only an `@` followed by `http://` or `https://`
 * starts the base URL.
 */
export function parseModelSpec(input: string): Parsed<ModelSpec> {
  const text = input.trim();
  if (text.toLowerCase() === 'demo') return { ok: true, value: DEMO_SPEC };
  const colon = text.indexOf(':');
  const usage = 'write it as <provider>:<model>[@<base URL>], e.g. anthropic:claude-haiku-4-5 or openai:gpt-4o-mini@http://127.0.0.1:8080/v1';
  if (colon <= 0) return { ok: false, message: `"${text.slice(0, 80)}" names no provider: ${usage}` };
  const provider = text.slice(0, colon).toLowerCase();
  let rest = text.slice(colon + 1);
  let baseURL: string | undefined;
  const at = Math.max(rest.lastIndexOf('@http://'), rest.lastIndexOf('@https://'));
  if (at >= 0) {
    baseURL = rest.slice(at + 1);
    rest = rest.slice(0, at);
    try {
      const u = new URL(baseURL);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
    } catch {
      return { ok: false, message: `"${baseURL.slice(0, 120)}" is not an http(s) URL: ${usage}` };
    }
  }
  const model = rest.trim();
  if (!model) return { ok: false, message: `"${text.slice(0, 80)}" names no model: ${usage}` };
  if (model.length > 200 || /\s/.test(model)) return { ok: false, message: `"${model.slice(0, 80)}" is not a model name: ${usage}` };
  switch (provider) {
    case 'anthropic':
    case 'openai':
      return { ok: true, value: { provider, model, ...(baseURL ? { baseURL } : {}), text } };
    case 'ollama':
      return { ok: true, value: { provider: 'openai', model, baseURL: baseURL ?? OLLAMA_BASE_URL, apiKey: 'ollama', text } };
    default:
      return { ok: false, message: `unknown provider "${provider.slice(0, 40)}" (anthropic, openai or ollama): ${usage}` };
  }
}

/** The demo model's spec: `--model demo`, or what `--demo` sets when no model is configured. */
export const DEMO_SPEC: ModelSpec = Object.freeze({ provider: 'demo', model: DEMO_MODEL_NAME, text: 'demo' });

export interface ModelSettings {
  /** The spec every role uses unless it has its own. */
  default: ModelSpec | null;
  roles: Partial<Record<ModelRole, ModelSpec>>;
}

/** `parseArgs` options for `roost serve`: `--model` and `--model-<role>`. */
export const MODEL_FLAG_OPTIONS: Record<string, { type: 'string' }> = Object.fromEntries([
  ['model', { type: 'string' as const }],
  ...MODEL_ROLES.map((r) => [`model-${r}`, { type: 'string' as const }]),
]);

/**
 * The settings from parsed flags (`--model`, `--model-<role>`) and the
 * environment (`ROOST_MODEL`, `ROOST_MODEL_<ROLE>`); a flag wins over the
 * environment. A bad spec is an error naming the flag or variable it came from.
 */
export function modelSettings(flags: Record<string, unknown>, env: Record<string, string | undefined> = process.env): Parsed<ModelSettings> {
  const read = (flag: string, envName: string): Parsed<ModelSpec | null> => {
    const f = flags[flag];
    const v = typeof f === 'string' && f.trim() ? f : env[envName];
    if (v === undefined || v.trim() === '') return { ok: true, value: null };
    const p = parseModelSpec(v);
    const from = typeof f === 'string' && f.trim() ? `--${flag}` : envName;
    return p.ok ? p : { ok: false, message: `${from}: ${p.message}` };
  };
  const d = read('model', 'ROOST_MODEL');
  if (!d.ok) return d;
  // `--demo` (docs/demo.md): the demo model serves the flock when nothing else is configured; never otherwise.
  if (d.value === null && flags.demo === true) d.value = DEMO_SPEC;
  const roles: Partial<Record<ModelRole, ModelSpec>> = {};
  for (const r of MODEL_ROLES) {
    const p = read(`model-${r}`, `ROOST_MODEL_${r.toUpperCase()}`);
    if (!p.ok) return p;
    if (p.value) roles[r] = p.value;
  }
  return { ok: true, value: { default: d.value, roles } };
}

/** The spec serving `role`, or null. */
export function specFor(settings: ModelSettings, role: ModelRole): ModelSpec | null {
  return settings.roles[role] ?? settings.default;
}

/** What `POST /api/lists` answers (503) when no model serves lists, naming the settings. */
export const NO_PROVIDER_MESSAGE =
  'No model is configured for the flock. Start Roost with --model anthropic:<model> (key in ANTHROPIC_API_KEY) ' +
  'or --model openai:<model>[@<base URL>] (key in OPENAI_API_KEY; Ollama, llama.cpp and vLLM serve this API, e.g. --model ollama:llama3.1), ' +
  'or set ROOST_MODEL. Per-role overrides: --model-sentry, --model-crow, --model-elder, --model-quill, --model-boss, --model-banter, --model-jev.';

/** One provider for a spec, wrapped in the retry policy. Throws with a readable message when it cannot be made. */
export function createProvider(spec: ModelSpec, opts: { retry?: RetryOptions; env?: Record<string, string | undefined> } = {}): ModelProvider {
  const env = opts.env ?? process.env;
  let p: ModelProvider;
  // Offline and scripted: no retries to wrap.
  if (spec.provider === 'demo') return new DemoProvider();
  if (spec.provider === 'anthropic') {
    p = new AnthropicProvider({ model: spec.model, label: spec.text, ...(spec.baseURL ? { baseURL: spec.baseURL } : {}), ...(spec.apiKey ? { apiKey: spec.apiKey } : {}) });
  } else {
    const baseURL = spec.baseURL ?? env.OPENAI_BASE_URL;
    if (isOpenAIHosted(baseURL) && !spec.apiKey && !env.OPENAI_API_KEY) throw new Error(`${spec.text}: OPENAI_API_KEY is not set (a local server needs a base URL: openai:<model>@http://host:port/v1)`);
    p = new OpenAIProvider({ model: spec.model, label: spec.text, ...(baseURL ? { baseURL } : {}), ...(spec.apiKey ? { apiKey: spec.apiKey } : {}) });
  }
  return withRetries(p, opts.retry);
}

/**
 * The providers of every role, made once per distinct spec. `forRole` is null
 * for a role nothing serves; `ready` is true when the roles a list needs (the
 * Sentry and the crows) are served.
 */
export class ModelRoster {
  private readonly bySpec = new Map<string, ModelProvider>();
  private readonly byRole = new Map<ModelRole, ModelProvider>();

  constructor(readonly settings: ModelSettings, opts: { retry?: RetryOptions; env?: Record<string, string | undefined>; make?: (spec: ModelSpec) => ModelProvider } = {}) {
    const make = opts.make ?? ((spec: ModelSpec) => createProvider(spec, opts));
    for (const r of MODEL_ROLES) {
      const spec = specFor(settings, r);
      if (!spec) continue;
      let p = this.bySpec.get(spec.text);
      if (!p) this.bySpec.set(spec.text, (p = make(spec)));
      this.byRole.set(r, p);
    }
  }

  forRole(role: ModelRole): ModelProvider | null {
    return this.byRole.get(role) ?? null;
  }

  get ready(): boolean {
    return this.byRole.has('sentry') && this.byRole.has('crow');
  }

  /** Which model serves each role (for logs and the flock view). */
  describe(): { role: ModelRole; model: string | null }[] {
    return MODEL_ROLES.map((role) => ({ role, model: this.byRole.get(role)?.label ?? null }));
  }
}
