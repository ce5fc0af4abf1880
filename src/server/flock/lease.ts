// The driver's lease: held only while there is work, renewed by its holder,
// taken by any node once it runs out; taking it resumes what the log says is unfinished.

import { leaseHolder, unfinishedLists, flockTs, inFlight, unannouncedTrust, trustChangedEvent } from '../../core/flock.js';
import { FlockVerdicts } from './verdicts.js';

export abstract class FlockLease extends FlockVerdicts {

  // ------------------------------------------------------------ the lease

  get driving(): boolean {
    return !this.stopped && this.settings.models !== null && leaseHolder(this.state, Date.now()) === this.node;
  }

  /**
   * The lease is held only while there is work (an unfinished list, or a nest
   * message that wants a crow or has one in the air): an idle
   * flock writes nothing. Renewed by its holder every third of its time;
   * taken by any node once nobody holds it and work waits.
   */
  protected async tickLease(): Promise<void> {
    if (this.stopped) return;
    const holder = leaseHolder(this.state, Date.now());
    if (holder !== '' && holder !== this.node) return this.watchExpiry();
    if (unfinishedLists(this.state).length === 0 && !this.nests.hasWork()) return;
    await this.claimLease();
  }

  /**
   * Another node holds the lease: look again the moment it runs out, not a
   * tick later, so a dead holder is replaced within its lease (each renewal
   * folded moves the moment on).
   */
  protected watchExpiry(): void {
    const until = this.state.lease?.until;
    if (until === undefined || this.stopped) return;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = null;
      void this.tickLease().catch((e) => console.error('roost: flock lease failed', e));
    }, Math.max(0, until - Date.now()) + 20);
    this.expiryTimer.unref();
  }

  /** Nest work arrived while nobody drives: take the lease (taking it resumes every list and nest). */
  async wantLease(): Promise<void> {
    if (this.settings.models && !this.stopped && leaseHolder(this.state, Date.now()) === '') await this.claimLease();
  }

  protected claimLease(): Promise<void> {
    this.claiming ??= this.claim().finally(() => (this.claiming = null));
    return this.claiming;
  }

  protected async claim(): Promise<void> {
    if (this.stopped) return;
    const was = this.driving;
    // This process's own lease lapsed (a stall longer than the ttl) and nobody took it meanwhile:
    // nothing of this node died, so its banter stays and its announcements are its own; only the
    // passes skipped while it did not drive are run again.
    const lapsed = this.droveOnce && this.state.lease?.node === this.node;
    await this.append([{ type: 'lease.claimed', node: this.node, ttl_ms: this.settings.leaseMs, ts: flockTs(Date.now()) }]);
    if (this.driving && !was) {
      if (!lapsed) return this.resume();
      for (const id of unfinishedLists(this.state)) this.kick(id);
      this.nests.kickAll();
    }
  }

  /** Took the lease (a start, or another node's lease ran out): pick up what the log says is unfinished. */
  protected async resume(): Promise<void> {
    this.droveOnce = true;
    const ts = flockTs(Date.now());
    // Open banter is dropped (its call died with the node that made it).
    const open = inFlight(this.state);
    const drops = open.banter.map((b) => ({ type: 'banter.dropped', list_id: b.list_id, item_id: b.item_id, crow: b.crow, to: b.to, reason: 'restart', ts }));
    const ann = unannouncedTrust(this.state).map((c) => trustChangedEvent(c, ts));
    await this.append([...drops, ...ann]);
    if (this.crows && this.opts.floor) {
      this.crows.resync(this.state, await this.opts.floor().catch(() => null));
      this.crows.flushNow(this.state, this.driving);
    }
    for (const id of unfinishedLists(this.state)) this.kick(id);
    this.nests.kickAll();
  }
}
