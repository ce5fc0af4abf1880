// Which model serves which role: the `--model <provider>:<model>[@baseURL]`
// spec, per-role overrides, the environment, and the roster built from them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import { MODEL_FLAG_OPTIONS, MODEL_ROLES, ModelRoster, NO_PROVIDER_MESSAGE, OLLAMA_BASE_URL, createProvider, modelSettings, parseModelSpec, type ModelProvider, type ModelSpec } from '../src/models/index.js';
import { openaiStandin, oaText, oaStep } from './support/openai-standin.js';

test('a spec is <provider>:<model>[@baseURL]; model names may hold : and @', () => {
  assert.deepEqual(parseModelSpec('anthropic:claude-haiku-4-5'), { ok: true, value: { provider: 'anthropic', model: 'claude-haiku-4-5', text: 'anthropic:claude-haiku-4-5' } });
  assert.deepEqual(parseModelSpec(' openai:gpt-4o-mini@http://127.0.0.1:8080/v1 '), {
    ok: true,
    value: { provider: 'openai', model: 'gpt-4o-mini', baseURL: 'http://127.0.0.1:8080/v1', text: 'openai:gpt-4o-mini@http://127.0.0.1:8080/v1' },
  });
  const ollama = parseModelSpec('ollama:llama3.1:8b');
  assert.deepEqual(ollama.ok && ollama.value, { provider: 'openai', model: 'llama3.1:8b', baseURL: OLLAMA_BASE_URL, apiKey: 'ollama', text: 'ollama:llama3.1:8b' });
  const vertexish = parseModelSpec('anthropic:claude-x@20250101@https://proxy.example/anthropic');
  assert.deepEqual(vertexish.ok && [vertexish.value.model, vertexish.value.baseURL], ['claude-x@20250101', 'https://proxy.example/anthropic']);
  const remoteOllama = parseModelSpec('ollama:qwen2.5@http://gpu-box:11434/v1');
  assert.equal(remoteOllama.ok && remoteOllama.value.baseURL, 'http://gpu-box:11434/v1');
});

test('a bad spec says what is wrong and how to write it', () => {
  for (const [bad, why] of [
    ['claude-haiku', /names no provider/],
    ['anthropic:', /names no model/],
    ['gemini:pro', /unknown provider "gemini"/],
    ['openai:gpt 4', /not a model name/],
    ['openai:m@http://', /not an http\(s\) URL/],
  ] as const) {
    const p = parseModelSpec(bad);
    assert.equal(p.ok, false, bad);
    if (!p.ok) {
      assert.match(p.message, why);
      assert.match(p.message, /<provider>:<model>\[@<base URL>\]/);
    }
  }
});

test('--model serves every role; --model-<role> overrides one; flags win over ROOST_MODEL*', () => {
  const { values } = parseArgs({ args: ['--model', 'anthropic:claude-sonnet', '--model-banter', 'ollama:llama3.1', '--port', '1'], options: { ...MODEL_FLAG_OPTIONS, port: { type: 'string' } } });
  const env = { ROOST_MODEL: 'openai:ignored', ROOST_MODEL_JEV: 'openai:gpt-4o-mini@http://127.0.0.1:9/v1' };
  const s = modelSettings(values, env);
  assert.ok(s.ok);
  if (!s.ok) return;
  assert.equal(s.value.default?.text, 'anthropic:claude-sonnet', 'the flag wins over ROOST_MODEL');
  assert.equal(s.value.roles.banter?.text, 'ollama:llama3.1');
  assert.equal(s.value.roles.jev?.text, 'openai:gpt-4o-mini@http://127.0.0.1:9/v1', 'from ROOST_MODEL_JEV');
  assert.equal(s.value.roles.sentry, undefined);
  assert.deepEqual(Object.keys(MODEL_FLAG_OPTIONS).sort(), ['model', ...MODEL_ROLES.map((r) => `model-${r}`)].sort());
});

test('a bad setting names the flag or variable it came from', () => {
  const a = modelSettings({ 'model-elder': 'nope' }, {});
  assert.equal(a.ok, false);
  assert.match(!a.ok ? a.message : '', /^--model-elder: /);
  const b = modelSettings({}, { ROOST_MODEL_SENTRY: 'x:' });
  assert.match(!b.ok ? b.message : '', /^ROOST_MODEL_SENTRY: /);
});

test('nothing configured: the roster is not ready and the 503 message names the settings', () => {
  const s = modelSettings({}, {});
  assert.ok(s.ok);
  if (!s.ok) return;
  const r = new ModelRoster(s.value);
  assert.equal(r.ready, false);
  assert.equal(r.forRole('sentry'), null);
  for (const words of ['--model anthropic:', 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'Ollama', 'ROOST_MODEL', '--model-sentry']) assert.ok(NO_PROVIDER_MESSAGE.includes(words), words);
});

test('the roster makes one provider per distinct spec and serves each role its own', () => {
  const s = modelSettings({ model: 'anthropic:a', 'model-banter': 'anthropic:b', 'model-jev': 'anthropic:a' }, {});
  assert.ok(s.ok);
  if (!s.ok) return;
  const made: string[] = [];
  const fake = (spec: ModelSpec): ModelProvider => {
    made.push(spec.text);
    return { provider: spec.provider, model: spec.model, label: spec.text, capabilities: { structuredOutput: true, tokenUsage: true, streaming: false }, call: async () => assert.fail('not called') };
  };
  const r = new ModelRoster(s.value, { make: fake });
  assert.deepEqual(made, ['anthropic:a', 'anthropic:b']);
  assert.equal(r.ready, true);
  assert.equal(r.forRole('jev'), r.forRole('sentry'));
  assert.deepEqual(
    r.describe().map((d) => `${d.role}=${d.model}`),
    ['sentry=anthropic:a', 'crow=anthropic:a', 'elder=anthropic:a', 'quill=anthropic:a', 'boss=anthropic:a', 'banter=anthropic:b', 'jev=anthropic:a'],
  );
});

test('OpenAI\'s own API without OPENAI_API_KEY is refused at start with the way out', () => {
  const spec = parseModelSpec('openai:gpt-4o-mini');
  assert.ok(spec.ok);
  if (!spec.ok) return;
  assert.throws(() => createProvider(spec.value, { env: {} }), /OPENAI_API_KEY is not set.*base URL/);
});

test('a provider from a spec retries a 503 by itself (the one retry policy is built in)', async () => {
  const model = await openaiStandin([oaStep({ error: { status: 503 } }), oaStep(oaText('after a retry'))]);
  try {
    const spec = parseModelSpec(`openai:m@${model.url}/v1`);
    assert.ok(spec.ok);
    if (!spec.ok) return;
    const p = createProvider(spec.value, { retry: { baseMs: 1 }, env: {} });
    const o = await p.call({ system: 's', messages: [{ role: 'user', content: 'u' }], maxTokens: 5 });
    assert.equal(o.ok && o.text, 'after a retry');
    assert.equal(model.requests.length, 2);
  } finally {
    await model.close();
  }
});
