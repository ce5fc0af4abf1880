// Readers for hostile event fields: every reader takes what the event holds
// and answers a clean, clamped value or undefined, never throws; and the
// names the fold gives (tidyName).

import { LIMITS, STATUSES, type FloorEvent, type Status } from './model.js';

export function str(v: unknown, cap: number): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  if (t.length === 0) return undefined;
  return t.length > cap ? t.slice(0, cap) : t;
}

/** `code-reviewer_2` → `Code Reviewer 2`. */
export function tidyName(id: string): string {
  const words = id
    .replace(/[-_.:/]+/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .trim()
    .split(/\s+/);
  const out = words.map((w) => (w ? w[0].toUpperCase() + w.slice(1) : w)).join(' ');
  return (out || id).slice(0, LIMITS.name);
}

export function isLead(role: string): boolean {
  return role.toLowerCase() === 'lead';
}

export function isStatus(v: unknown): v is Status {
  return typeof v === 'string' && (STATUSES as readonly string[]).includes(v);
}

export function tsOf(e: FloorEvent): number {
  const t = e.ts;
  return typeof t === 'number' && Number.isFinite(t) ? t : 0;
}

export interface AgentRef {
  id: string;
  name?: string;
  role?: string;
  source?: string;
}

export function agentRef(e: FloorEvent): AgentRef | undefined {
  const a = e.agent;
  let ref: AgentRef | undefined;
  if (typeof a === 'string') {
    const id = str(a, LIMITS.id);
    if (id) ref = { id };
  } else if (a && typeof a === 'object' && !Array.isArray(a)) {
    const o = a as Record<string, unknown>;
    const id = str(o.id, LIMITS.id);
    if (id) ref = { id, name: str(o.name, LIMITS.name), role: str(o.role, LIMITS.role), source: str(o.source, LIMITS.source) };
  }
  if (!ref) return undefined;
  // Top-level fields win over the agent object's.
  ref.name = str(e.name, LIMITS.name) ?? ref.name;
  ref.role = str(e.role, LIMITS.role) ?? ref.role;
  ref.source = str(e.source, LIMITS.source) ?? ref.source;
  return ref;
}

/** The id of the agent an event names (as the fold reads it: trimmed, clamped), before any subagent hint; undefined for none. */
export function agentIdOf(e: FloorEvent): string | undefined {
  return agentRef(e)?.id;
}

export function teamRef(v: unknown): { id: string; name: string } | undefined {
  if (typeof v === 'string') {
    const n = str(v, LIMITS.teamName);
    return n ? { id: n, name: n } : undefined;
  }
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    const name = str(o.name, LIMITS.teamName);
    const id = str(o.id, LIMITS.id) ?? name;
    if (!id) return undefined;
    return { id, name: name ?? id };
  }
  return undefined;
}
