// The state of a view's live stream, in words and colour, the same in every
// view. `replaying`: a reopened stream is folding what happened meanwhile;
// `closed`: the server ended it for good (access removed).

export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'replaying' | 'closed';

const TEXT: Record<ConnectionState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  replaying: 'Catching up…',
  closed: 'Closed',
};

export function ConnectionBadge(props: { state: ConnectionState; testid: string }) {
  return (
    <span class={`conn conn-${props.state}`} data-testid={props.testid} data-state={props.state} role="status" aria-live="polite">
      <span class="dot" aria-hidden="true" />
      {TEXT[props.state]}
    </span>
  );
}
