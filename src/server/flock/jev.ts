// Jev, the tagger (issue 14 part 3; the contract's "Tagging"): every nest
// message gets a kind, every request a mode, each with probabilities. Two
// implementations of one interface:
// - EmbeddedJev: a softmax logistic regression (text-model.ts) on words,
//   bigrams and character trigrams, trained by `npm run jev:train`
//   (scripts/jev.ts) on data/jev/train.jsonl, its temperature fitted on
//   data/jev/calibration.jsonl, kept in data/jev/model.json and loaded at
//   start; works offline with no model;
// - ModelJev: one forced tool call through the provider interface, when a
//   model serves the `jev` role.
// `decideTag` is the contract's rule; docs/flock.md ("Jev") has the band,
// the measured accuracy and calibration.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import { CROW_KINDS, NEST_MODES, type NestMode, type TaggedBy } from '../../core/flock.js';
import type { ModelProvider } from '../../models/index.js';
import { SoftmaxModel, textFeatures, type ModelJSON, type TrainOptions } from './text-model.js';

/** The kinds Jev chooses among (the crow-postable ones: ask_owner comes only by header, nudge and flag from the server). */
export const JEV_KINDS = CROW_KINDS;
export type JevKind = (typeof JEV_KINDS)[number];

export interface JevAnswer {
  kind: JevKind;
  kindProbs: Record<string, number>;
  /** Asked for when the message may be a request. */
  mode?: NestMode;
  modeProbs?: Record<string, number>;
  tokens?: number;
}

export interface Jev {
  readonly source: 'embedded' | 'model';
  /** Null when Jev could not answer (a failed model call): the rule then treats it as unsure. */
  tag(text: string, header?: { kind?: string; mode?: string }): Promise<JevAnswer | null>;
}

/** The package root (this file is dist/src/server/flock/jev.js, or src/server/flock/jev.ts under tsx). */
const JEV_ROOT = join(fileURLToPath(new URL('.', import.meta.url)), ...(import.meta.url.includes('/dist/') ? ['..', '..', '..', '..'] : ['..', '..', '..']));

let shared: EmbeddedJev | null = null;
/** The embedded Jev, loaded once per process. */
export function embeddedJev(): EmbeddedJev {
  return (shared ??= EmbeddedJev.fromRepo());
}

/** The default high band: Jev's top label stands at or above it. */
export const JEV_BAND = 0.8;

/**
 * The contract's rule, for a kind or a mode. Jev sure (top probability at or
 * above the band): its label stands, `jev`, or `disagreement` when a header
 * said otherwise. Jev unsure: the header, `header`. Neither: the fallback,
 * `default`.
 */
export function decideTag<L extends string>(probs: Record<string, number> | undefined, header: L | '', band: number, fallback: L | ''): { value: L | ''; by: TaggedBy } {
  let top = '';
  let p = -1;
  for (const [l, q] of Object.entries(probs ?? {})) if (q > p) [top, p] = [l, q];
  if (top && p >= band) return { value: top as L, by: header && header !== top ? 'disagreement' : 'jev' };
  if (header) return { value: header, by: 'header' };
  return { value: fallback, by: 'default' };
}

// ------------------------------------------------------------ the embedded one

interface Row {
  text: string;
  kind: string;
  mode?: string;
}

/** Jev's features of a message (text-model.ts: words, bigrams, the first word, character trigrams, shapes). */
export function features(text: string): string[] {
  return textFeatures(text);
}

/** One text classifier: a softmax over `features`, with its fitted temperature. */
export class TextClassifier {
  private constructor(readonly model: SoftmaxModel) {}

  get labels(): readonly string[] {
    return this.model.labels;
  }

  /** Seconds, deterministic: `npm run jev:train` runs it and keeps the result. */
  static train(labels: readonly string[], rows: { text: string; label: string }[], opts?: Partial<TrainOptions>): TextClassifier {
    return new TextClassifier(SoftmaxModel.train(labels, rows.map((r) => ({ features: features(r.text), label: r.label })), opts));
  }

  /** Temperature scaling on a calibration split (never the held-out set). */
  calibrate(rows: { text: string; label: string }[]): number {
    return this.model.fitTemperature(rows.map((r) => ({ features: features(r.text), label: r.label })));
  }

  toJSON(): ModelJSON {
    return this.model.toJSON();
  }

  static fromJSON(o: ModelJSON): TextClassifier {
    return new TextClassifier(SoftmaxModel.fromJSON(o));
  }

  /** P(label | text), calibrated. */
  probs(text: string): Record<string, number> {
    return this.model.probs(features(text));
  }
}

export function readCorpus(path: string): Row[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Row);
}

export function argmax(p: Record<string, number>): string {
  return Object.entries(p).reduce((a, b) => (b[1] > a[1] ? b : a), ['', -1])[0];
}

export type JevModelFile = { kinds: ModelJSON; modes: ModelJSON };

const kindRows = (rows: Row[]) => rows.map((r) => ({ text: r.text, label: r.kind }));
const modeRows = (rows: Row[]) => rows.filter((r) => r.mode).map((r) => ({ text: r.text, label: r.mode! }));

export class EmbeddedJev implements Jev {
  readonly source = 'embedded' as const;
  private constructor(
    readonly kinds: TextClassifier,
    readonly modes: TextClassifier,
  ) {}

  /**
   * Trains on corpus rows (the kinds on every row, the modes on the requests
   * that carry one), then fits each classifier's temperature on the
   * calibration rows when given.
   */
  static train(rows: Row[], calibration: Row[] = []): EmbeddedJev {
    const jev = new EmbeddedJev(TextClassifier.train(JEV_KINDS, kindRows(rows)), TextClassifier.train(NEST_MODES, modeRows(rows)));
    if (calibration.length) {
      jev.kinds.calibrate(kindRows(calibration));
      jev.modes.calibrate(modeRows(calibration));
    }
    return jev;
  }

  toJSON(): JevModelFile {
    return { kinds: this.kinds.toJSON(), modes: this.modes.toJSON() };
  }

  static fromJSON(o: JevModelFile): EmbeddedJev {
    return new EmbeddedJev(TextClassifier.fromJSON(o.kinds), TextClassifier.fromJSON(o.modes));
  }

  /** The model kept in the repo (data/jev/model.json under `root`, made by `npm run jev:train` from data/jev/train.jsonl and calibration.jsonl). */
  static fromRepo(root = JEV_ROOT): EmbeddedJev {
    return EmbeddedJev.fromJSON(JSON.parse(readFileSync(join(root, 'data', 'jev', 'model.json'), 'utf8')) as JevModelFile);
  }

  tag(text: string): Promise<JevAnswer> {
    const kindProbs = this.kinds.probs(text);
    const modeProbs = this.modes.probs(text);
    return Promise.resolve({ kind: argmax(kindProbs) as JevKind, kindProbs, mode: argmax(modeProbs) as NestMode, modeProbs });
  }
}

// ------------------------------------------------------------ the model-backed one

const probsOf = (labels: readonly string[]) => Type.Object(Object.fromEntries(labels.map((l) => [l, Type.Number({ minimum: 0, maximum: 1 })])), { additionalProperties: false });

export const JEV_TOOL = {
  name: 'tag_message',
  description: 'Tag one nest message: the probability of each kind, and (for a possible request) of each mode.',
  schema: Type.Object({ kind: probsOf(JEV_KINDS), mode: Type.Optional(probsOf(NEST_MODES)) }),
};

export const JEV_SYSTEM = [
  'You are Jev, the tagger of a chat room where people and crows (AI agents) work together.',
  'Give the probability of each kind for the message: say (ordinary talk), request (asks for work), claim (takes a request),',
  'deliver (the result of a request), refer (points to an artifact by name), decline (refuses a request with a reason).',
  'If it could be a request, also give the probability of each mode: solo (one crow), conspiracy (several crows, one task, distinct readings),',
  'split (the work divided into parts). Probabilities of each question sum to 1. Call the tool; say nothing else.',
].join(' ');

function normalise(raw: unknown, labels: readonly string[]): Record<string, number> | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const o = raw as Record<string, unknown>;
  const sum = labels.reduce((a, l) => a + (typeof o[l] === 'number' ? (o[l]) : 0), 0);
  if (!(sum > 0)) return undefined;
  return Object.fromEntries(labels.map((l) => [l, Math.round(((typeof o[l] === 'number' ? (o[l]) : 0) / sum) * 1e4) / 1e4]));
}

export class ModelJev implements Jev {
  readonly source = 'model' as const;
  constructor(
    private provider: ModelProvider,
    private timeoutMs = 30_000,
  ) {}

  async tag(text: string, header?: { kind?: string; mode?: string }): Promise<JevAnswer | null> {
    const said = header?.kind ? `\nThe author's own header says: ${header.kind}${header.mode ? ` (${header.mode})` : ''}. Judge for yourself.` : '';
    const out = await this.provider.call({ system: JEV_SYSTEM, messages: [{ role: 'user', content: `Message:\n${text}${said}` }], maxTokens: 300, tool: JEV_TOOL, temperature: 0, timeoutMs: this.timeoutMs });
    if (!out.ok || out.kind !== 'tool') return null;
    const kindProbs = normalise(out.input.kind, JEV_KINDS);
    if (!kindProbs) return null;
    const modeProbs = normalise(out.input.mode, NEST_MODES);
    return { kind: argmax(kindProbs) as JevKind, kindProbs, ...(modeProbs ? { mode: argmax(modeProbs) as NestMode, modeProbs } : {}), tokens: out.usage.total };
  }
}

// ------------------------------------------------------------ calibration

export interface Calibration {
  n: number;
  accuracy: number;
  /** Multiclass Brier score: the mean over messages of Σ_label (p − [label is right])². 0 is perfect. */
  brier: number;
  /** Expected calibration error: Σ over the bins of (n_bin / n) × |mean top p − observed accuracy|, 10 equal bins. */
  ece: number;
  /** Per true label: how many, and how many the top label got right. */
  labels: { label: string; n: number; right: number }[];
  /** The top label's probability in bins of 0.1, against how often the top label was right. */
  bins: { from: number; to: number; n: number; meanP: number; observed: number }[];
}

/** Accuracy, Brier score, expected calibration error and a reliability table of `probs` against the true labels. */
export function calibrate(rows: { probs: Record<string, number>; truth: string }[]): Calibration {
  const bins = Array.from({ length: 10 }, (_, i) => ({ from: i / 10, to: (i + 1) / 10, n: 0, sumP: 0, right: 0 }));
  const labels = new Map<string, { label: string; n: number; right: number }>();
  let right = 0;
  let brier = 0;
  for (const r of rows) {
    const top = argmax(r.probs);
    const p = r.probs[top] ?? 0;
    const ok = top === r.truth ? 1 : 0;
    right += ok;
    for (const [l, q] of Object.entries(r.probs)) brier += (q - (l === r.truth ? 1 : 0)) ** 2;
    const b = bins[Math.min(9, Math.floor(p * 10))];
    b.n++;
    b.sumP += p;
    b.right += ok;
    const c = labels.get(r.truth) ?? labels.set(r.truth, { label: r.truth, n: 0, right: 0 }).get(r.truth)!;
    c.n++;
    c.right += ok;
  }
  const n = rows.length || 1;
  const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
  let ece = 0;
  for (const b of bins) if (b.n) ece += (b.n / n) * Math.abs(b.sumP / b.n - b.right / b.n);
  return {
    n: rows.length,
    accuracy: r4(right / n),
    brier: r4(brier / n),
    ece: r4(ece),
    labels: [...labels.values()],
    bins: bins.filter((b) => b.n > 0).map((b) => ({ from: b.from, to: b.to, n: b.n, meanP: r4(b.sumP / b.n), observed: r4(b.right / b.n) })),
  };
}

/** Jev's calibration on labelled rows (the held-out set): the kinds on every row, the modes on the rows with one. */
export async function measure(jev: Jev, rows: Row[]): Promise<{ kind: Calibration; mode: Calibration }> {
  const kinds: { probs: Record<string, number>; truth: string }[] = [];
  const modes: { probs: Record<string, number>; truth: string }[] = [];
  for (const r of rows) {
    const a = await jev.tag(r.text);
    if (!a) continue;
    kinds.push({ probs: a.kindProbs, truth: r.kind });
    if (r.mode && a.modeProbs) modes.push({ probs: a.modeProbs, truth: r.mode });
  }
  return { kind: calibrate(kinds), mode: calibrate(modes) };
}

export function calibrationTable(name: string, c: Calibration): string {
  const lines = [
    `${name}: n ${c.n}, accuracy ${c.accuracy}, ECE ${c.ece}, Brier ${c.brier}`,
    `per label (right/n): ${c.labels.map((l) => `${l.label} ${l.right}/${l.n}`).join(', ')}`,
    '| predicted p | n | mean p | observed |',
    '|---|---|---|---|',
  ];
  for (const b of c.bins) lines.push(`| ${b.from.toFixed(1)}–${b.to.toFixed(1)} | ${b.n} | ${b.meanP.toFixed(3)} | ${b.observed.toFixed(3)} |`);
  return lines.join('\n');
}
