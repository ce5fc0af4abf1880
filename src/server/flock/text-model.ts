// The small text classifiers Roost embeds (Jev's kinds and modes, the
// watchdog's three scores: docs/flock.md, "Jev" and "The watchdog"): a
// multinomial logistic regression (softmax, L2) over sparse binary features,
// trained by full-batch gradient descent with Adam, then calibrated by one
// temperature fitted on a calibration split (never on the held-out set).
//
// Why written here and not a library: training must be quick and
// deterministic (seconds, the same weights on every run: no random
// initialisation, no shuffling), the model file small (sparse weights), and
// the probabilities one softmax whose temperature can be fitted.
//
// Features (`textFeatures`): lowercased words, word bigrams, the first word,
// character trigrams inside each word (so a typo still shares most of its
// trigrams with the word it misspells), and a few shapes (code, a path or link, a trailing question mark; no length: it made every
// short message read as small talk). Every feature vector is
// L2-normalised before the weights see it.

/** Words: letters, digits and apostrophes (any script), plus the few signs that carry meaning. */
const WORD = /[\p{L}\p{N}']+|[@:?!]/gu;

export function words(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

export function textFeatures(text: string, prefix = ''): string[] {
  const ws = words(text);
  const out = new Set<string>();
  out.add(prefix + '^' + (ws[0] ?? ''));
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i];
    out.add(prefix + w);
    if (i + 1 < ws.length) out.add(prefix + w + ' ' + ws[i + 1]);
    if (w.length >= 3 && /^\p{L}+$/u.test(w)) {
      const b = `<${w}>`;
      for (let j = 0; j + 3 <= b.length; j++) out.add(prefix + '#' + b.slice(j, j + 3));
    }
  }
  if (/[{};`]|=>|\(\)/.test(text)) out.add(prefix + '$code');
  if (/https?:\/\/|\b[\w.-]+\/[\w./-]+|\b\w+\.(md|ts|js|txt|pdf|csv|json|py|go|sql|yml|yaml)\b/i.test(text)) out.add(prefix + '$path');
  if (/\?\s*$/.test(text.trim())) out.add(prefix + '$ends?');
  return [...out];
}

export interface ModelJSON {
  labels: string[];
  minNorm: number;
  temperature: number;
  /** The bias per label. */
  bias: number[];
  /** Per feature, its weight per label (features whose weights all round to 0 are dropped). */
  weights: Record<string, number[]>;
}

export interface TrainOptions {
  epochs: number;
  learningRate: number;
  /** L2 penalty on the weights (not the bias), per example. */
  l2: number;
  /** A feature must occur in at least this many training rows. */
  minCount: number;
  /**
   * The norm divides by √max(features, this): a message with few known
   * features (a word or two, gibberish) carries less evidence than a sentence
   * and so gets weaker scores, instead of one word speaking as loudly as a paragraph.
   */
  minNorm: number;
}

const DEFAULTS: TrainOptions = { epochs: 300, learningRate: 0.05, l2: 1e-4, minCount: 1, minNorm: 30 };

function softmax(z: number[], t: number): number[] {
  let m = -Infinity;
  for (const v of z) m = Math.max(m, v / t);
  const e = z.map((v) => Math.exp(v / t - m));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}

/** A trained softmax classifier over feature strings. */
export class SoftmaxModel {
  private constructor(
    readonly labels: readonly string[],
    private minNorm: number,
    private bias: number[],
    private weights: Map<string, number[]>,
    public temperature: number,
  ) {}

  /** Deterministic: the same rows in the same order give the same weights. */
  static train(labels: readonly string[], rows: { features: string[]; label: string }[], opts: Partial<TrainOptions> = {}): SoftmaxModel {
    const o = { ...DEFAULTS, ...opts };
    if (rows.some((r) => !labels.includes(r.label)) || labels.some((l) => !rows.some((r) => r.label === l))) throw new Error('every row needs a known label, and every label a row');
    const count = new Map<string, number>();
    for (const r of rows) for (const f of new Set(r.features)) count.set(f, (count.get(f) ?? 0) + 1);
    const index = new Map<string, number>();
    for (const [f, c] of count) if (c >= o.minCount) index.set(f, index.size);
    const K = labels.length;
    const D = index.size;
    const X = rows.map((r) => {
      const ids = [...new Set(r.features)].map((f) => index.get(f)).filter((i): i is number => i !== undefined);
      return { ids, w: 1 / Math.sqrt(Math.max(1, o.minNorm, ids.length)), y: labels.indexOf(r.label) };
    });
    // Each label weighs the same in the loss whatever its share of the rows (the prior is not learnt from the corpus's mix).
    const perLabel = labels.map((l) => rows.filter((r) => r.label === l).length);
    const rowWeight = perLabel.map((c) => rows.length / (labels.length * c));
    const W = new Float64Array(D * K);
    const b = new Float64Array(K);
    // Adam state.
    const mW = new Float64Array(D * K);
    const vW = new Float64Array(D * K);
    const mb = new Float64Array(K);
    const vb = new Float64Array(K);
    const [b1, b2, eps] = [0.9, 0.999, 1e-8];
    const N = X.length;
    const gW = new Float64Array(D * K);
    const gb = new Float64Array(K);
    const z = new Array<number>(K);
    for (let epoch = 1; epoch <= o.epochs; epoch++) {
      gW.fill(0);
      gb.fill(0);
      for (const x of X) {
        for (let k = 0; k < K; k++) {
          let s = b[k];
          for (const i of x.ids) s += W[i * K + k] * x.w;
          z[k] = s;
        }
        const p = softmax(z, 1);
        for (let k = 0; k < K; k++) {
          const g = ((p[k] - (k === x.y ? 1 : 0)) * rowWeight[x.y]) / N;
          gb[k] += g;
          for (const i of x.ids) gW[i * K + k] += g * x.w;
        }
      }
      for (let j = 0; j < D * K; j++) gW[j] += o.l2 * W[j];
      const c1 = 1 - b1 ** epoch;
      const c2 = 1 - b2 ** epoch;
      for (let j = 0; j < D * K; j++) {
        mW[j] = b1 * mW[j] + (1 - b1) * gW[j];
        vW[j] = b2 * vW[j] + (1 - b2) * gW[j] * gW[j];
        W[j] -= (o.learningRate * (mW[j] / c1)) / (Math.sqrt(vW[j] / c2) + eps);
      }
      for (let k = 0; k < K; k++) {
        mb[k] = b1 * mb[k] + (1 - b1) * gb[k];
        vb[k] = b2 * vb[k] + (1 - b2) * gb[k] * gb[k];
        b[k] -= (o.learningRate * (mb[k] / c1)) / (Math.sqrt(vb[k] / c2) + eps);
      }
    }
    const weights = new Map<string, number[]>();
    for (const [f, i] of index) {
      const w = Array.from(W.subarray(i * K, i * K + K), (v) => Math.round(v * 1e3) / 1e3);
      if (w.some((v) => v !== 0)) weights.set(f, w);
    }
    return new SoftmaxModel(labels, o.minNorm, Array.from(b, (v) => Math.round(v * 1e3) / 1e3), weights, 1);
  }

  static fromJSON(o: ModelJSON): SoftmaxModel {
    return new SoftmaxModel(o.labels, o.minNorm ?? 1, o.bias, new Map(Object.entries(o.weights)), o.temperature);
  }

  toJSON(): ModelJSON {
    return { labels: [...this.labels], minNorm: this.minNorm, temperature: this.temperature, bias: this.bias, weights: Object.fromEntries(this.weights) };
  }

  /** The raw scores (before the temperature) of a feature set. */
  logits(features: string[]): number[] {
    const known = [...new Set(features)].map((f) => this.weights.get(f)).filter((w): w is number[] => w !== undefined);
    // The norm counts only features the model kept, as in training (unknown words do not dilute the known ones).
    const z = this.bias.slice();
    if (!known.length) return z;
    const w = 1 / Math.sqrt(Math.max(1, this.minNorm, known.length));
    for (const ws of known) for (let k = 0; k < z.length; k++) z[k] += ws[k] * w;
    return z;
  }

  /**
   * P(label | features) at the model's temperature, each rounded to 4
   * decimals and at most 0.9999: a softmax is never certain, so a band of 1
   * means "never sure".
   */
  probs(features: string[], temperature = this.temperature): Record<string, number> {
    const p = softmax(this.logits(features), temperature);
    const out: Record<string, number> = {};
    this.labels.forEach((l, i) => (out[l] = Math.min(0.9999, Math.round(p[i] * 1e4) / 1e4)));
    return out;
  }

  /**
   * Temperature scaling: the temperature that minimises the negative
   * log-likelihood of the rows (a calibration split), by golden-section search
   * on log T in [1/20, 20]. Sets it on the model and returns it.
   */
  fitTemperature(rows: { features: string[]; label: string }[]): number {
    const data = rows.map((r) => ({ z: this.logits(r.features), y: this.labels.indexOf(r.label) })).filter((r) => r.y >= 0);
    const nll = (lt: number) => {
      const t = Math.exp(lt);
      let s = 0;
      for (const r of data) s -= Math.log(Math.max(1e-12, softmax(r.z, t)[r.y]));
      return s;
    };
    let [lo, hi] = [Math.log(1 / 20), Math.log(20)];
    const g = (Math.sqrt(5) - 1) / 2;
    for (let i = 0; i < 80; i++) {
      const a = hi - g * (hi - lo);
      const c = lo + g * (hi - lo);
      if (nll(a) < nll(c)) hi = c;
      else lo = a;
    }
    this.temperature = Math.round(Math.exp((lo + hi) / 2) * 1e4) / 1e4;
    return this.temperature;
  }
}
