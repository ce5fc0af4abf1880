// The whole page's word on the live connection (docs/web.md, "Outages"):
// while the browser's one connection to Roost is lost, a banner across the
// top of every view says that what the page shows may be out of date, and
// since when. It is driven by the hub's own state (web/src/live/hub.ts), the
// same state every view's connection badge follows, so the banner goes when
// the connection is back, and the badges say Live again.

import { useEffect, useState } from 'preact/hooks';
import { liveHub, type HubState } from '../live/hub.js';

export function OutageBanner() {
  const hub = liveHub();
  const [state, setState] = useState<HubState>(hub.state);
  useEffect(() => {
    setState(hub.state);
    return hub.watch(setState);
  }, [hub]);
  if (state !== 'reconnecting') return null;
  const since = hub.downSince;
  return (
    <div class="outage" role="alert" data-testid="outage">
      <strong>Roost cannot be reached.</strong> What this page shows may be out of date{since ? ` (as of ${new Date(since).toLocaleTimeString()})` : ''}; it catches up by itself when the connection is back. Decisions cannot be sent until then.
    </div>
  );
}
