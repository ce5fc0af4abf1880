// Jev's calibration from the log (docs/flock.md, "Jev: calibration from the
// log"): every `jev.tag` event carries the probabilities Jev gave a message;
// the truth it is measured against comes from the log too, in this order:
//   1. the owner's correction (`jev.truth`, POST /api/nests/{id}/messages/{msg}/kind:
//      the kind, and a request's mode, the message really was; the latest one wins);
//   2. else the author's own header (`header` on the `jev.tag` event), but only
//      for the embedded classifier's tags: it reads the text alone, so the header
//      is a label it never saw. The model-backed Jev is shown the header, so its
//      tags are measured against owner corrections only.
// A tag with neither is not counted. `npm run jev:calibration -- --data <dir>`
// (or `--db <postgres url>`) runs this over a server's store (scripts/jev.ts).

import { NEST_MODES, type JevQuestion } from '../../core/flock.js';
import type { EventStore } from '../../storage/types.js';
import { JEV_KINDS, calibrate, type Calibration } from './jev.js';
import { flockStream } from './service.js';

type Obj = Record<string, unknown>;

export interface TruthRow {
  nest_id: string;
  msg_id: string;
  question: JevQuestion;
  probs: Record<string, number>;
  truth: string;
  /** Where the truth came from. */
  from: 'owner' | 'header';
  source: 'embedded' | 'model';
}

export interface LogCalibration {
  kind: Calibration;
  mode: Calibration;
  /** Tags read, and how many were counted by each source of truth. */
  tags: number;
  byOwner: number;
  byHeader: number;
  rows: TruthRow[];
}

const labelsOf = (q: JevQuestion): readonly string[] => (q === 'kind' ? JEV_KINDS : NEST_MODES);

/** Folds log events (in order) into labelled rows: a linear pass, keyed by message and question in Maps. */
export function truthRows(events: Iterable<unknown>): { rows: TruthRow[]; tags: number } {
  const tags = new Map<string, { nest_id: string; msg_id: string; question: JevQuestion; probs: Record<string, number>; header: string; source: 'embedded' | 'model' }>();
  const owner = new Map<string, string>();
  for (const e of events) {
    if (!e || typeof e !== 'object') continue;
    const o = e as Obj;
    const q = o.question === 'kind' || o.question === 'mode' ? o.question : undefined;
    if (!q || typeof o.nest_id !== 'string' || typeof o.msg_id !== 'string') continue;
    const key = `${o.nest_id}\u0000${o.msg_id}\u0000${q}`;
    if (o.type === 'jev.tag' && o.probs && typeof o.probs === 'object' && !tags.has(key)) {
      const probs: Record<string, number> = {};
      for (const l of labelsOf(q)) {
        const p = (o.probs as Obj)[l];
        if (typeof p === 'number' && Number.isFinite(p)) probs[l] = p;
      }
      if (Object.keys(probs).length === 0) continue;
      tags.set(key, { nest_id: o.nest_id, msg_id: o.msg_id, question: q, probs, header: typeof o.header === 'string' ? o.header : '', source: o.source === 'model' ? 'model' : 'embedded' });
    } else if (o.type === 'jev.truth' && typeof o.label === 'string' && labelsOf(q).includes(o.label)) {
      owner.set(key, o.label);
    }
  }
  const rows: TruthRow[] = [];
  for (const [key, t] of tags) {
    const corrected = owner.get(key);
    const header = t.source === 'embedded' && labelsOf(t.question).includes(t.header) ? t.header : '';
    const truth = corrected ?? header;
    if (!truth) continue;
    rows.push({ nest_id: t.nest_id, msg_id: t.msg_id, question: t.question, probs: t.probs, truth, from: corrected ? 'owner' : 'header', source: t.source });
  }
  return { rows, tags: tags.size };
}

export function calibrateRows(rows: TruthRow[], tags: number): LogCalibration {
  const of = (q: JevQuestion) => calibrate(rows.filter((r) => r.question === q).map((r) => ({ probs: r.probs, truth: r.truth })));
  return { kind: of('kind'), mode: of('mode'), tags, byOwner: rows.filter((r) => r.from === 'owner').length, byHeader: rows.filter((r) => r.from === 'header').length, rows };
}

/** Reads a project's flock stream from a store, page by page, and measures Jev against the log's truth. */
export async function calibrationFromStore(store: EventStore, project = 'default'): Promise<LogCalibration> {
  const stream = flockStream(project);
  const events: unknown[] = [];
  for (let after = 0; ; ) {
    const page = await store.read(stream, after, 1000);
    if (page.length === 0) break;
    for (const e of page) if (e.type === 'jev.tag' || e.type === 'jev.truth') events.push(JSON.parse(e.body));
    after = page[page.length - 1].position;
  }
  const { rows, tags } = truthRows(events);
  return calibrateRows(rows, tags);
}
