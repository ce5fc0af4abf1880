// How far one node carries (issue 34; bench/capacity.ts): 10,000 idle SSE clients, 1,000 of them at 200 events/s, hooks/s, the floor at its cap.
import { addChildRows, type Workload } from '../lib.js';

export default {
  name: 'capacity',
  needs: 'one node',
  run: () => addChildRows('capacity.js'),
} satisfies Workload;
