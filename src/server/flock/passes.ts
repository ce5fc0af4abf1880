// The drivers' scheduling (docs/flock.md): one pass at a time per id (a list
// for the list driver in service.ts, a nest for nest-driver.ts). Kicks in one
// turn of the event loop coalesce into one setImmediate; a kick while that
// id's pass runs makes one more pass after it, so a change that lands
// mid-pass is never missed and never raced by a second pass of the same id.

export class Passes {
  private dirty = new Set<string>();
  private running = new Set<string>();
  private scheduled = false;

  constructor(
    /** One pass over an id (the caller tracks it, so a stop can wait for it). */
    private pass: (id: string) => Promise<void>,
    /** A pass that threw (logged by the caller unless it is stopping). */
    private failed: (id: string, e: unknown) => void,
    /** Whether the driver stopped: kicks are ignored then. */
    private stopped: () => boolean,
  ) {}

  kick(id: string): void {
    if (this.stopped()) return;
    this.dirty.add(id);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.pump);
  }

  private pump = (): void => {
    this.scheduled = false;
    for (const id of [...this.dirty]) {
      if (this.running.has(id)) continue;
      this.dirty.delete(id);
      this.running.add(id);
      void this.pass(id)
        .catch((e) => this.failed(id, e))
        .finally(() => {
          this.running.delete(id);
          if (this.dirty.has(id)) this.kick(id);
        });
    }
  };
}
