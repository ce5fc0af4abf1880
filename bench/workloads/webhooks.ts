// Outbound webhooks (issue 31): 1,000 deliveries once and in order per target; a 30 s outage, then every one arrives, none twice.
// One run (the outage alone takes 30 s); ROOST_BENCH_WEBHOOK_OUTAGE_S shortens it.
import { child, fmt, add, type Workload } from '../lib.js';

export default {
  name: 'webhooks',
  needs: 'one node',
  async run() {
    const r = await child<{ deliveries: number; firstMs: number; perSecond: number; firstOnce: boolean; firstOrdered: boolean; outageS: number; failedAttempts: number; recoverMs: number; secondOnce: boolean; secondOrdered: boolean; twice: number; badSignatures: number }>('webhooks.js', [
      process.env.ROOST_BENCH_WEBHOOK_OUTAGE_S ?? '30',
    ]);
    const label = 'webhooks: 4 targets × 250 events to a local receiver (signatures checked), SQLite';
    const good1 = r.firstOnce && r.firstOrdered && r.badSignatures === 0;
    add({ workload: label, metric: `${r.deliveries} deliveries, all delivered once, in order per target`, values: [r.firstMs], unit: 'ms', target: 'all once, in order', ok: () => good1, note: `${fmt(r.perSecond)}/s; once ${r.firstOnce}, in order ${r.firstOrdered}` });
    const good2 = r.secondOnce && r.secondOrdered && r.twice === 0;
    add({
      workload: label,
      metric: `receiver down ${r.outageS} s while ${r.deliveries} more wait, then back: all arrive, none twice (time after it is back)`,
      values: [r.recoverMs],
      unit: 'ms',
      target: 'all arrive, none twice',
      ok: () => good2,
      note: `${r.failedAttempts} failed attempts during the outage (backoff base 100 ms); once ${r.secondOnce}, in order ${r.secondOrdered}`,
    });
  },
} satisfies Workload;
