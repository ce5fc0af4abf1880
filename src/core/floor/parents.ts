// Parents and subagent hints, indexed both ways: an agent's children, and the
// hint keys filed by helper and by the agent they start with, so removing an
// agent forgets its hints without walking the floor.

import type { Agent, FloorState } from './model.js';

export function setParent(s: FloorState, a: Agent, parent: string | null): void {
  if (a.parent === parent) return;
  if (a.parent !== null) {
    const kids = s.index.children.get(a.parent);
    if (kids && kids.delete(a.id) && kids.size === 0) s.index.children.delete(a.parent);
  }
  a.parent = parent;
  if (parent !== null) {
    let kids = s.index.children.get(parent);
    if (!kids) s.index.children.set(parent, (kids = new Set()));
    kids.add(a.id);
  }
}

export function fileUnder(m: Map<string, Set<string>>, k: string, key: string): void {
  let set = m.get(k);
  if (!set) m.set(k, (set = new Set()));
  set.add(key);
}

export function unfile(m: Map<string, Set<string>>, k: string, key: string): void {
  const set = m.get(k);
  if (set && set.delete(key) && set.size === 0) m.delete(k);
}

/** Every `x` such that `key` starts with `x + "\u0000"` (one, unless an id itself holds a NUL). */
export function prefixesOf(key: string): string[] {
  const out: string[] = [];
  for (let i = key.indexOf('\u0000'); i >= 0; i = key.indexOf('\u0000', i + 1)) out.push(key.slice(0, i));
  return out;
}

export function setHint(s: FloorState, key: string, helper: string): void {
  const old = s.hints.get(key);
  if (old === helper) return;
  if (old === undefined) for (const x of prefixesOf(key)) fileUnder(s.index.hintsByPrefix, x, key);
  else unfile(s.index.hintsByHelper, old, key);
  s.hints.set(key, helper);
  fileUnder(s.index.hintsByHelper, helper, key);
}

export function deleteHint(s: FloorState, key: string): void {
  const helper = s.hints.get(key);
  if (helper === undefined) return;
  s.hints.delete(key);
  unfile(s.index.hintsByHelper, helper, key);
  for (const x of prefixesOf(key)) unfile(s.index.hintsByPrefix, x, key);
}
