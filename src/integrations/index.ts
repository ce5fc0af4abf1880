// The integrations layer's public surface: agent tools' hook payloads mapped
// onto the floor. Pure; imports only src/core.
export * from './claude-code.js';
export * from './others.js';
export * from './otlp.js';
export * from './transcript.js';
