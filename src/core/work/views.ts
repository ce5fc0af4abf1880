// What the server and the views read off the state: the commands due on a
// Space, a Space's agents, and whether someone may command an agent.

import { WORK_LIMITS, type Agent, type Command, type WorkState } from './model.js';

/** The command each idle agent of a Space should run now (the head of its queue), in log order. */
export function dueCommands(state: WorkState, space: string): Command[] {
  const sp = state.spaces.get(space);
  if (!sp?.contributed) return [];
  const out: Command[] = [];
  for (const aid of state.agentsBySpace.get(space) ?? []) {
    const a = state.agents.get(aid);
    if (!a || a.running || a.state === 'ended' || a.queue.length === 0) continue;
    const c = state.commands.get(a.queue[0]);
    if (c) out.push(c);
  }
  return out.sort((x, y) => x.position - y.position);
}

/** The agents of one Space, in the order they were first seen. */
export function agentsOfSpace(state: WorkState, space: string): Agent[] {
  const out: Agent[] = [];
  for (const aid of state.agentsBySpace.get(space) ?? []) {
    const a = state.agents.get(aid);
    if (a) out.push(a);
  }
  return out;
}

/** May `uid` send commands to this agent? (Role is checked by the server; this is the Space rule.) */
export function mayCommand(state: WorkState, agentId: string, uid: string): string | null {
  const a = state.agents.get(agentId);
  if (!a) return 'no such agent';
  const sp = state.spaces.get(a.space);
  if (!sp?.contributed) return 'its Space is not contributed to this project (revoked)';
  if (a.state === 'ended') return 'the agent has ended';
  if (!a.callable && sp.owner.uid !== uid) return `${a.label} is trusted local: read-only to teammates unless ${sp.owner.name} makes it callable`;
  if (a.queue.length >= WORK_LIMITS.queue) return `${a.label} already has ${WORK_LIMITS.queue} commands waiting`;
  return null;
}
