// Jev, the tagger (issue 14 part 3; the contract's "Tagging"): every nest
// message gets a kind, every request a mode, each with probabilities. Two
// implementations of one interface:
// - EmbeddedJev: a logistic regression (ml-logistic-regression, one-vs-all,
//   probabilities normalised over the labels) on word unigrams and bigrams,
//   trained by `npm run jev:train` (bench/jev.ts) on data/jev/train.jsonl and kept in
//   data/jev/model.json, loaded at start; works offline with no model;
// - ModelJev: one forced tool call through the provider interface, when a
//   model serves the `jev` role.
// `decideTag` is the contract's rule; docs/flock.md ("Jev") has the band,
// the measured accuracy and calibration.

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Type } from '@sinclair/typebox';
import { CROW_KINDS, NEST_MODES, type NestMode, type TaggedBy } from '../../core/flock.js';
import type { ModelProvider } from '../../models/index.js';

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

/** Words (letters, digits, apostrophes) lowercased, with bigrams and a start marker. */
export function features(text: string): string[] {
  const words = text.toLowerCase().match(/[a-z0-9']+|[@:?!]/g) ?? [];
  const out = new Set<string>(['^' + (words[0] ?? '')]);
  for (let i = 0; i < words.length; i++) {
    out.add(words[i]);
    if (i + 1 < words.length) out.add(words[i] + ' ' + words[i + 1]);
  }
  return [...out];
}

interface MatrixLike {
  mmul(other: MatrixLike): MatrixLike;
}
interface MatrixCtor {
  new (rows: number[][]): MatrixLike;
  columnVector(v: number[]): MatrixLike;
}
interface LogReg {
  train(X: MatrixLike, Y: MatrixLike): void;
  classifiers: { testScores(X: MatrixLike): number[] }[];
  toJSON(): unknown;
}
type LogRegCtor = (new (o: { numSteps: number; learningRate: number }) => LogReg) & { load(model: unknown): LogReg };

const req = createRequire(import.meta.url);
const LogisticRegression = req('ml-logistic-regression') as LogRegCtor;
// The Matrix class the library itself uses (its own dependency).
const Matrix = createRequire(req.resolve('ml-logistic-regression'))('ml-matrix') as { Matrix: MatrixCtor } & MatrixCtor;
const M: MatrixCtor = Matrix.Matrix ?? Matrix;

/** One text classifier: a vocabulary and a one-vs-all logistic regression. */
export class TextClassifier {
  private constructor(
    readonly labels: readonly string[],
    private vocab: Map<string, number>,
    private model: LogReg,
  ) {}

  /** Slow on a loaded machine (about a minute for the kinds): `npm run jev:train` runs it and keeps the result. */
  static train(labels: readonly string[], rows: { text: string; label: string }[], opts = { numSteps: 400, learningRate: 0.05 }): TextClassifier {
    if (rows.some((r) => !labels.includes(r.label)) || labels.some((l) => !rows.some((r) => r.label === l))) throw new Error('every row needs a known label, and every label a row');
    const vocab = new Map<string, number>();
    for (const r of rows) for (const f of features(r.text)) if (!vocab.has(f)) vocab.set(f, vocab.size);
    const c = new TextClassifier(labels, vocab, new LogisticRegression(opts));
    c.model.train(new M(rows.map((r) => c.vector(r.text))), M.columnVector(rows.map((r) => labels.indexOf(r.label))));
    return c;
  }

  toJSON(): { labels: readonly string[]; vocab: string[]; model: unknown } {
    return { labels: this.labels, vocab: [...this.vocab.keys()], model: this.model.toJSON() };
  }

  static fromJSON(o: { labels: string[]; vocab: string[]; model: unknown }): TextClassifier {
    return new TextClassifier(o.labels, new Map(o.vocab.map((w, i) => [w, i])), LogisticRegression.load(o.model));
  }

  /** Binary features, L2-normalised, and a bias term. */
  private vector(text: string): number[] {
    const v = new Array<number>(this.vocab.size + 1).fill(0);
    const fs = features(text).filter((f) => this.vocab.has(f));
    const w = 1 / Math.sqrt(Math.max(1, fs.length));
    for (const f of fs) v[this.vocab.get(f)!] = w;
    v[this.vocab.size] = 1;
    return v;
  }

  /** P(label | text), normalised over the labels. */
  probs(text: string): Record<string, number> {
    const X = new M([this.vector(text)]);
    // The library's one-vs-all scores say "not this class" (its class is the 0 side).
    const raw = this.model.classifiers.map((c) => 1 - c.testScores(X)[0]);
    const sum = raw.reduce((a, b) => a + b, 0) || 1;
    const out: Record<string, number> = {};
    this.labels.forEach((l, i) => (out[l] = Math.round((raw[i] / sum) * 1e4) / 1e4));
    return out;
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

export type JevModelFile = { kinds: Parameters<typeof TextClassifier.fromJSON>[0]; modes: Parameters<typeof TextClassifier.fromJSON>[0] };

export class EmbeddedJev implements Jev {
  readonly source = 'embedded' as const;
  private constructor(
    readonly kinds: TextClassifier,
    readonly modes: TextClassifier,
  ) {}

  /** Trains on corpus rows (the kinds on every row, the modes on the requests that carry one). */
  static train(rows: Row[]): EmbeddedJev {
    return new EmbeddedJev(
      TextClassifier.train(
        JEV_KINDS,
        rows.map((r) => ({ text: r.text, label: r.kind })),
      ),
      TextClassifier.train(
        NEST_MODES,
        rows.filter((r) => r.mode).map((r) => ({ text: r.text, label: r.mode! })),
      ),
    );
  }

  toJSON(): JevModelFile {
    return { kinds: this.kinds.toJSON() as JevModelFile['kinds'], modes: this.modes.toJSON() as JevModelFile['modes'] };
  }

  static fromJSON(o: JevModelFile): EmbeddedJev {
    return new EmbeddedJev(TextClassifier.fromJSON(o.kinds), TextClassifier.fromJSON(o.modes));
  }

  /** The model kept in the repo (data/jev/model.json under `root`, made by `npm run jev:train` from data/jev/train.jsonl). */
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
  /** The top label's probability in bins of 0.1, against how often the top label was right. */
  bins: { from: number; to: number; n: number; meanP: number; observed: number }[];
}

/** Accuracy, Brier score and a reliability table of `probs` against the true labels. */
export function calibrate(rows: { probs: Record<string, number>; truth: string }[]): Calibration {
  const bins = Array.from({ length: 10 }, (_, i) => ({ from: i / 10, to: (i + 1) / 10, n: 0, sumP: 0, right: 0 }));
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
  }
  const n = rows.length || 1;
  const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
  return {
    n: rows.length,
    accuracy: r4(right / n),
    brier: r4(brier / n),
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
  const lines = [`${name}: n ${c.n}, accuracy ${c.accuracy}, Brier ${c.brier}`, '| predicted p | n | mean p | observed |', '|---|---|---|---|'];
  for (const b of c.bins) lines.push(`| ${b.from.toFixed(1)}–${b.to.toFixed(1)} | ${b.n} | ${b.meanP.toFixed(3)} | ${b.observed.toFixed(3)} |`);
  return lines.join('\n');
}
