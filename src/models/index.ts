// The model providers behind the flock's crows (docs/models.md): one small
// interface with capability flags, two implementations, the one retry policy,
// and the settings that say which model serves which role.
export * from './types.js';
export { AnthropicProvider, anthropicUsage, type AnthropicOptions } from './anthropic.js';
export { OpenAIProvider, openaiUsage, isOpenAIHosted, type OpenAIOptions } from './openai.js';
export { withRetries, type RetryOptions } from './retry.js';
export { DemoProvider, DEMO_MODEL_NAME } from './demo.js';
export {
  MODEL_ROLES,
  ROLE_DUTIES,
  MODEL_FLAG_OPTIONS,
  NO_PROVIDER_MESSAGE,
  OLLAMA_BASE_URL,
  ModelRoster,
  createProvider,
  DEMO_SPEC,
  modelSettings,
  parseModelSpec,
  specFor,
  type ModelRole,
  type ModelSettings,
  type ModelSpec,
  type Parsed,
} from './config.js';
