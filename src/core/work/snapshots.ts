// The state as JSON and back (`workToJSON` / `workFromJSON`): every table as
// a list; the derived index (agentsBySpace) is rebuilt, never shipped.

import { emptyWork, type WorkJSON, type WorkState } from './model.js';

export function workToJSON(s: WorkState): WorkJSON {
  return {
    rev: s.rev,
    spaces: [...s.spaces.values()],
    conversations: [...s.conversations.values()],
    agents: [...s.agents.values()],
    commands: [...s.commands.values()],
    executions: [...s.executions.values()],
    results: [...s.results.values()],
    members: [...s.members.values()],
  };
}

/** A state from its wire form; owns what it holds (lists that grow in place are copied). */
export function workFromJSON(j: WorkJSON): WorkState {
  const s = emptyWork();
  s.rev = j.rev ?? 0;
  for (const sp of j.spaces ?? []) s.spaces.set(sp.id, { ...sp });
  for (const c of j.conversations ?? []) s.conversations.set(c.id, { ...c, messages: [...c.messages], links: [...c.links] });
  for (const a of j.agents ?? []) {
    s.agents.set(a.id, { ...a, queue: [...a.queue] });
    let ids = s.agentsBySpace.get(a.space);
    if (!ids) s.agentsBySpace.set(a.space, (ids = new Set()));
    ids.add(a.id);
  }
  for (const c of j.commands ?? []) s.commands.set(c.id, { ...c });
  for (const x of j.executions ?? []) s.executions.set(x.id, { ...x });
  for (const r of j.results ?? []) s.results.set(r.id, { ...r });
  for (const m of j.members ?? []) s.members.set(m.uid, { ...m });
  return s;
}
