// The floor's timeline of statuses, as a person watching would have seen it:
// every agent's status after each event of the log, collapsed to the changes
// ('left' once the agent walked out).
import { applyEvent, emptyFloor, type FloorEvent } from '../../src/core/floor.js';
import type { EventStore } from '../../src/storage/types.js';

export async function statusTimeline(store: EventStore, stream = 'floor'): Promise<Map<string, string[]>> {
  const entries = await store.read(stream, 0, 100_000);
  const s = emptyFloor();
  const hist = new Map<string, string[]>();
  for (const e of entries) {
    applyEvent(s, JSON.parse(e.body) as FloorEvent);
    for (const a of s.agents.values()) {
      const h = hist.get(a.id) ?? [];
      const st = a.leftAt !== null ? 'left' : a.status;
      if (h[h.length - 1] !== st) h.push(st);
      hist.set(a.id, h);
    }
  }
  return hist;
}

/** Every floor event in the log, parsed. */
export async function floorEvents(store: EventStore, stream = 'floor'): Promise<FloorEvent[]> {
  return (await store.read(stream, 0, 100_000)).map((e) => JSON.parse(e.body) as FloorEvent);
}

export const agentOf = (e: FloorEvent): string => (typeof e.agent === 'string' ? e.agent : (e.agent as { id: string }).id);
