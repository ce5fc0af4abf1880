// The one live mechanism (Server-Sent Events) of every app: a connection (one
// HTTP response) holds one or more scope subscriptions, and every scope is a
// channel: durable (a followed log stream: snapshot, ring, replay) or lossy
// (presence, roles, terminal bytes, a Space's command feed). The single-scope
// endpoints (/stream, /approvals/stream, /fleet/:thread/stream,
// /api/v2/events, ...) and the multiplexed `GET /live?s=...` are the same
// code; only the bytes of a frame differ (`Form`). The wire of the mux form is
// in src/core/live-wire.ts.
//
// By job, each file with the seams it keeps at its head:
//   frame.ts       the bytes of a frame in each form, made once and shared
//   connection.ts  one SSE response, its subscriptions, the slow-consumer rule;
//                  the channel base and the lossy channel
//   durable.ts     the durable channel: ring, flushes, snapshot then live,
//                  replay then live, the paced catch-up
//   serve.ts       `Live`: declared scopes, the endpoints, limits, heartbeat,
//                  access re-checked on every change

export { Frame, type Ev, type Form } from './frame.js';
export { Channel, Connection, LossyChannel, Subscription, type ChannelStats, type ConnectionHost, type Need } from './connection.js';
export { LiveChannel, type ChannelOptions, type LiveSource } from './durable.js';
export { Live, type LiveConfig, type ScopeSpec } from './serve.js';
