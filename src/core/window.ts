// An approval window as people write it (`600000`, `90s`, `10m`, `1h`) and as
// Roost prints it. One copy for the server's hook endpoint, the CLI's
// `roost hooks install` and the bridge. (bin/roost-hook.js keeps its own
// three lines: it runs on every tool call and must answer before it loads
// anything from dist/.)
//
// Pure: imports nothing.

/** Parses `600000`, `90s`, `10m`, `1h` (a bare number is ms) into ms; undefined when absent or unreadable. */
export function parseWindow(v: string | null | undefined): number | undefined {
  if (!v) return undefined;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit = m[2] ?? 'ms';
  return Math.round(n * (unit === 'h' ? 3_600_000 : unit === 'm' ? 60_000 : unit === 's' ? 1000 : 1));
}

/** The shortest exact spelling of a window: `10m`, `90s`, `1500ms`. */
export function formatWindow(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
