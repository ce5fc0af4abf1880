// The watchdog's scorer (issue 36 point 5; docs/flock.md, "The watchdog"):
// the three noul scores of a crow's claim or deliver against its request.
// Two implementations of one interface, like Jev:
// - EmbeddedWatchScorer: three two-label softmax classifiers (text-model.ts),
//   one per question, over the message's words and features of the pair
//   (how much of the request it covers, facts and named sources, values
//   that clash with the thread's), each with a temperature fitted on a
//   calibration split; trained by `npm run watch:train` (scripts/watch.ts) on
//   data/watch/train.jsonl, kept in data/watch/model.json, measured on the
//   held-out data/watch/test.jsonl by `npm run watch:calibration`. Serves
//   every server with no model configured;
// - the model's call (watchdog.ts, forced tool `watch_scores`) when a model
//   serves the `jev` role.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WATCH_SCORES, type WatchRecord } from '../../core/flock.js';
import { SoftmaxModel, textFeatures, words, type ModelJSON } from './text-model.js';
import { calibrate, type Calibration } from './jev.js';

export type WatchScores = WatchRecord['scores'];
export type WatchQuestion = (typeof WATCH_SCORES)[number];

/** What is scored: the request, the thread before the message (oldest first), the message. */
export interface WatchInput {
  request: string;
  thread: string[];
  kind: 'claim' | 'deliver';
  text: string;
}

/** A labelled example of the corpus (each label 0 or 1). */
export type WatchRow = WatchInput & Record<WatchQuestion, number>;

const STOP = new Set(
  'the a an and or of to in on for with is are was be it this that i you we me my your our please can could would someone some report back send need update check look into about from by at as'.split(' '),
);
/** Content words cut to their first 5 letters (a crude stem: "tagline" and "taglines" meet). */
const content = (t: string) => new Set(words(t).filter((w) => w.length >= 3 && !STOP.has(w) && /\p{L}/u.test(w)).map((w) => w.slice(0, 5)));
/** Values a fact turns on: numbers (with a unit), weekdays and months (not number words: "three taglines" is no claim of fact). */
const VALUE = /\d[\d.,]*\s*(?:%|k|ms)?|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december)\b/gi;
const values = (t: string) => new Set((t.toLowerCase().match(VALUE) ?? []).map((v) => v.replace(/\s+/g, '')));
const SOURCE = /\b(source|according|per|see|from|cited|via|link)\b|https?:\/\/|\b\w+\.(md|pdf|csv|txt|json)\b|\bissue \d+|\bsheet\b/i;

/** The features of one (request, thread, message): the message's own words, prefixed, and the pair's. */
export function watchFeatures(x: WatchInput): string[] {
  // The message's words and bigrams (no character trigrams: the pair's features below must not drown in them).
  const f = textFeatures(x.text, 'm:').filter((s) => !s.startsWith('m:#'));
  f.push(`kind:${x.kind}`);
  const req = content(x.request);
  const msg = content(x.text);
  let shared = 0;
  for (const w of req) if (msg.has(w)) shared++;
  // Shared content words, counted (not a share of the request: names and filler in a long request would dilute it).
  f.push(shared === 0 ? 'cover:none' : shared === 1 ? 'cover:one' : 'cover:more');
  const mv = values(x.text);
  if (mv.size) f.push('fact:value');
  const sourced = SOURCE.test(x.text);
  f.push(sourced ? 'source:named' : 'source:none');
  if (mv.size) f.push(sourced ? 'fact:sourced' : 'fact:unsourced');
  const before = x.thread.join('\n');
  const tv = values(before);
  if (!x.thread.length) f.push('thread:empty');
  if (mv.size && tv.size) {
    let same = 0;
    for (const v of mv) if (tv.has(v)) same++;
    f.push(same === mv.size ? 'thread:agrees' : same === 0 ? 'thread:clashes' : 'thread:partly');
  } else if (mv.size) f.push('thread:novalues');
  return f;
}

/** The package root (this file is dist/src/server/flock/watch-scorer.js, or src/server/flock/watch-scorer.ts under tsx). */
const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), ...(import.meta.url.includes('/dist/') ? ['..', '..', '..', '..'] : ['..', '..', '..']));

export type WatchModelFile = Record<WatchQuestion, ModelJSON>;

export class EmbeddedWatchScorer {
  readonly source = 'embedded' as const;
  private constructor(readonly models: Record<WatchQuestion, SoftmaxModel>) {}

  /** Trains the three classifiers, then fits each temperature on the calibration rows when given. */
  static train(rows: WatchRow[], calibration: WatchRow[] = []): EmbeddedWatchScorer {
    const feats = rows.map(watchFeatures);
    const calFeats = calibration.map(watchFeatures);
    const models = {} as Record<WatchQuestion, SoftmaxModel>;
    for (const q of WATCH_SCORES) {
      const m = SoftmaxModel.train(
        ['no', 'yes'],
        rows.map((r, i) => ({ features: feats[i], label: r[q] ? 'yes' : 'no' })),
      );
      if (calibration.length) m.fitTemperature(calibration.map((r, i) => ({ features: calFeats[i], label: r[q] ? 'yes' : 'no' })));
      models[q] = m;
    }
    return new EmbeddedWatchScorer(models);
  }

  toJSON(): WatchModelFile {
    return Object.fromEntries(WATCH_SCORES.map((q) => [q, this.models[q].toJSON()])) as WatchModelFile;
  }

  static fromJSON(o: WatchModelFile): EmbeddedWatchScorer {
    return new EmbeddedWatchScorer(Object.fromEntries(WATCH_SCORES.map((q) => [q, SoftmaxModel.fromJSON(o[q])])) as Record<WatchQuestion, SoftmaxModel>);
  }

  /** The model kept in the repo (data/watch/model.json, made by `npm run watch:train`). */
  static fromRepo(root = ROOT): EmbeddedWatchScorer {
    return EmbeddedWatchScorer.fromJSON(JSON.parse(readFileSync(join(root, 'data', 'watch', 'model.json'), 'utf8')) as WatchModelFile);
  }

  score(x: WatchInput): WatchScores {
    const f = watchFeatures(x);
    const out = {} as WatchScores;
    for (const q of WATCH_SCORES) out[q] = this.models[q].probs(f).yes;
    return out;
  }
}

let shared: EmbeddedWatchScorer | null = null;
/** The embedded scorer, loaded once per process. */
export function embeddedWatchScorer(): EmbeddedWatchScorer {
  return (shared ??= EmbeddedWatchScorer.fromRepo());
}

export function readWatchCorpus(path: string): WatchRow[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as WatchRow);
}

/** Each question's accuracy and calibration on labelled rows (the held-out set). */
export function measureWatch(scorer: EmbeddedWatchScorer, rows: WatchRow[]): Record<WatchQuestion, Calibration> {
  const per = Object.fromEntries(WATCH_SCORES.map((q) => [q, [] as { probs: Record<string, number>; truth: string }[]])) as Record<WatchQuestion, { probs: Record<string, number>; truth: string }[]>;
  for (const r of rows) {
    const s = scorer.score(r);
    for (const q of WATCH_SCORES) per[q].push({ probs: { yes: s[q], no: Math.round((1 - s[q]) * 1e4) / 1e4 }, truth: r[q] ? 'yes' : 'no' });
  }
  return Object.fromEntries(WATCH_SCORES.map((q) => [q, calibrate(per[q])])) as Record<WatchQuestion, Calibration>;
}
