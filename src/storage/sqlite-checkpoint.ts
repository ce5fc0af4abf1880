// WAL checkpoints off the event loop, for the embedded store (sqlite.ts).
//
// SQLite's automatic checkpoint runs inside the commit that crosses its
// threshold: it copies the WAL's pages into the database file and fsyncs both,
// a few milliseconds during which the event loop answers nothing (one commit
// in every ~70 of the flock's one-item lists, 3.5–7 ms each, was its largest
// cause of slow items). Here the main connection's automatic checkpoints are
// off, and a worker thread with a connection of its own runs PASSIVE
// checkpoints (which never wait for, nor block, the writer) every
// `passEvery` commits: the copying and both fsyncs happen there.
//
// A PASSIVE checkpoint cannot restart the WAL: a writer starts it over from
// its first frame only when, as it begins, every frame is already in the
// database file, and under steady writing one often came after the pass
// began. So when a pass leaves a WAL of `restartFrames` or more, the worker
// catches up: it passes again over the few frames written meanwhile, up to
// CATCH_UP_PASSES times, until a pass finds no frame that the one before it
// did not copy (then every frame is in the file, and the main connection's
// next commit restarts the WAL). A pass that does not catch up is tried again
// at the next pass, and the WAL grows meanwhile; only when it has grown to
// `finishFrames` without a pass catching up does the main connection finish
// the job itself, between two commits: a PASSIVE checkpoint of the frames
// written since the last pass began, with the database file's fsync on the
// event loop (1–4 ms here; the flock's bench paid it about 15 times per 1,000
// lists before the worker caught up, 1 to 3 when it finished at
// `restartFrames`, none since). Should the worker fail or stop answering, the
// main connection checkpoints every `fallbackCommits` commits on its own, as
// SQLite would; every pass the worker reports starts that count again.

import type Database from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

export interface CheckpointOptions {
  /** Commits between two of the worker's passes. */
  passEvery: number;
  /** A WAL this long (frames) is checkpointed to its end and restarted. */
  restartFrames: number;
  /** A WAL this long (frames) that no pass caught up on is finished by the main connection. */
  finishFrames: number;
  /** Commits after which the main connection checkpoints by itself, worker or not. */
  fallbackCommits: number;
}

export const CHECKPOINT_DEFAULTS: CheckpointOptions = { passEvery: 64, restartFrames: 1000, finishFrames: 4000, fallbackCommits: 4096 };

/**
 * What the worker reports of a pass: frames in the WAL and how many of them
 * are in the database file (after its last PASSIVE checkpoint), and whether it
 * caught up (no frame was written between its last two checkpoints).
 */
interface Pass {
  log: number;
  checkpointed: number;
  caughtUp: boolean;
}

/** The worker's checkpoints after the first, at most, while frames keep coming in behind it. */
const CATCH_UP_PASSES = 12;

// The worker: one connection; a message (the WAL length from which to catch
// up) asks for a pass: a PASSIVE checkpoint, then, for a WAL that long whose
// frames it all copied, more while frames keep arriving behind it (see the
// file comment). Plain JavaScript run from a string (eval), so it needs no
// build step and runs the same under the compiled server and under tsx in the
// tests.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 0');
parentPort.on('message', (m) => {
  if (m === 'close') { db.close(); parentPort.close(); return; }
  try {
    let [r] = db.pragma('wal_checkpoint(PASSIVE)');
    let caughtUp = false;
    for (let i = 0; i < workerData.catchUp && r.log >= m && r.checkpointed === r.log; i++) {
      const [next] = db.pragma('wal_checkpoint(PASSIVE)');
      // No longer than the last: nothing was written since it began (or the WAL restarted).
      caughtUp = next.log <= r.log;
      r = next;
      if (caughtUp) break;
    }
    parentPort.postMessage({ log: r.log, checkpointed: r.checkpointed, caughtUp });
  } catch (e) {
    parentPort.postMessage({ error: String(e && e.message || e) });
  }
});
`;

export class Checkpointer {
  /** Started at the first pass, so a short-lived store (a CLI command, a test) never pays for a thread. */
  private worker: Worker | null = null;
  private failed = false;
  private passing = false;
  private sincePass = 0;
  private sinceCheckpoint = 0;
  private checkpoint: Database.Statement;
  private closed = false;
  /** Counters for tests and benches: the worker's passes (and those that caught up), and the main connection's own checkpoints. */
  readonly stats = { passes: 0, caughtUp: 0, finished: 0, fallbacks: 0, failures: 0 };

  constructor(
    db: Database.Database,
    private path: string,
    private opts: CheckpointOptions = CHECKPOINT_DEFAULTS,
  ) {
    this.checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
    // Measured: SQLite's own checkpoint, inside one commit in ~70 of the flock's lists, held the loop 3.5–7 ms, its largest cause of slow items (docs/architecture.md).
    db.pragma('wal_autocheckpoint = 0');
  }

  private started(): Worker | null {
    if (this.worker || this.failed || this.closed) return this.worker;
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const w = new Worker(WORKER, { eval: true, workerData: { path: this.path, driver, catchUp: CATCH_UP_PASSES } });
    w.on('message', (m: Pass | { error: string }) => this.reported(m));
    w.on('error', (e) => {
      console.error('roost: the WAL checkpoint worker failed; checkpointing on the main connection', e);
      this.stats.failures++;
      this.failed = true;
      this.worker = null;
      this.passing = false;
    });
    // An open store never keeps a process alive (after the listeners: adding one refs the worker again).
    w.unref();
    this.worker = w;
    return w;
  }

  /** A commit of the main connection: maybe a pass, or (far behind) a checkpoint here. */
  committed(): void {
    this.sincePass++;
    this.sinceCheckpoint++;
    if (this.sinceCheckpoint >= this.opts.fallbackCommits) {
      this.stats.fallbacks++;
      this.here();
      return;
    }
    if (this.passing || this.sincePass < this.opts.passEvery) return;
    const w = this.started();
    if (!w) return;
    this.passing = true;
    this.sincePass = 0;
    w.postMessage(this.opts.restartFrames);
  }

  private reported(m: Pass | { error: string }): void {
    this.passing = false;
    if (this.closed) return;
    if ('error' in m) {
      this.stats.failures++;
      return;
    }
    this.stats.passes++;
    // The worker checkpoints: the main connection's fallback counts from here.
    this.sinceCheckpoint = 0;
    if (m.caughtUp) {
      this.stats.caughtUp++;
      return;
    }
    // Every frame the pass saw is in the file, but no pass caught up while the WAL grew this long:
    // finish the few written since, so the next commit restarts the WAL. Shorter, the next pass tries again.
    if (m.log >= this.opts.finishFrames && m.checkpointed === m.log) {
      this.stats.finished++;
      this.here();
    }
  }

  /** A PASSIVE checkpoint on the main connection (between commits: the store commits synchronously). */
  private here(): void {
    try {
      this.checkpoint.get();
      this.sinceCheckpoint = 0;
    } catch (e) {
      console.error('roost: a WAL checkpoint failed', e);
    }
  }

  /** Stops the worker (its connection closed first, so the main one is the last to close). */
  async close(): Promise<void> {
    this.closed = true;
    const w = this.worker;
    this.worker = null;
    if (!w) return;
    // Held by the loop while it closes (unref'd otherwise, so an open store never keeps a process alive).
    w.ref();
    await new Promise<void>((done) => {
      w.once('exit', () => done());
      w.postMessage('close');
      setTimeout(() => void w.terminate().then(() => done()), 2000).unref();
    });
  }
}
