// Three nodes behind HAProxy against one node directly (issue 34; bench/proxy.ts): batched ingest, single events, hooks.
import { addChildRows, type Workload } from '../lib.js';

export default {
  name: 'proxy',
  needs: 'postgres',
  run: () => addChildRows('proxy.js'),
} satisfies Workload;
