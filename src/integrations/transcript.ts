// Usage from a Claude Code transcript (the JSONL file a hook payload names in
// `transcript_path`, or `agent_transcript_path` for a subagent's own): each
// assistant message's `message.usage`, counted once per message id.
//
// Claude Code writes one line per content block of a message, every line
// with the same `message.id` and the same usage, so a message is read once.
// Messages with `isSidechain` in a session's transcript belong to a subagent
// (older versions kept them there) and are left out; a subagent's own file
// (2.1.x: `<session>/subagents/agent-<id>.jsonl`) marks every line so, and is
// read with `sidechain: true`.
// Claude Code's own `<synthetic>` messages (no model request) are skipped.
// Pure: the caller reads the file.

import { dayOf } from './otlp.js';

export interface TranscriptRequest {
  /** The message id (`msg_…`): the key that makes reading the file again harmless. */
  id: string;
  model: string;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  day: string;
  ts: number;
}

const tokens = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.min(Math.floor(v), 1_000_000_000) : 0);

/** The model requests a transcript's text records, in order, once each. */
export function transcriptUsage(text: string, opts: { sidechain: boolean } = { sidechain: false }): TranscriptRequest[] {
  const out: TranscriptRequest[] = [];
  const seen = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.includes('"assistant"') || !line.includes('"usage"')) continue;
    let r: any;
    try {
      r = JSON.parse(line);
    } catch {
      continue;
    }
    if (!r || typeof r !== 'object' || r.type !== 'assistant') continue;
    if (!opts.sidechain && r.isSidechain === true) continue;
    const m = r.message;
    if (!m || typeof m !== 'object' || typeof m.id !== 'string' || !m.id || m.id.length > 128) continue;
    const model = typeof m.model === 'string' ? m.model.slice(0, 120) : '';
    if (model === '<synthetic>') continue;
    const u = m.usage;
    if (!u || typeof u !== 'object') continue;
    if (seen.has(m.id)) continue;
    seen.add(m.id);
    const parsed = typeof r.timestamp === 'string' ? Date.parse(r.timestamp) : NaN;
    const ts = Number.isFinite(parsed) ? parsed : 0;
    out.push({
      id: m.id,
      model,
      input: tokens(u.input_tokens),
      output: tokens(u.output_tokens),
      cacheRead: tokens(u.cache_read_input_tokens),
      cacheWrite: tokens(u.cache_creation_input_tokens),
      day: ts ? dayOf(ts) : 'unknown',
      ts,
    });
  }
  return out;
}
