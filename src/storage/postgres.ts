// Placeholder until the PostgreSQL backend lands (see docs/scale-out.md).
import type { EventStore } from './types.js';
export const PostgresStore = {
  async open(_url: string): Promise<EventStore> {
    throw new Error('the PostgreSQL store is not built yet');
  },
};
