// Agents: observed on a Space (keyed by Space and session, whatever its pane
// or label; a new one gets its chat), ended (its queue cancelled, a running
// execution failed), and made callable or read-only to teammates.

import { WORK_LIMITS, agentChatOf, agentIdOf, type Agent, type AgentOrigin, type AgentState, type Who } from './model.js';
import { id, str, type Rec } from './read.js';
import { SYSTEM, newConversation, putAgent, putCommand, say, touchConversation, type Draft, type WorkStep } from './draft.js';
import { finishExecution } from './executions.js';

/** An agent seen on a Space: new, moved, relabelled, revived, or its mode or state changed. */
function agentObserved(d: Draft, e: Rec, at: number): void {
  const s = d.s;
  const sid = id(e.space);
  const session = id(e.session);
  if (!sid || !session) return;
  const sp = s.spaces.get(sid);
  if (!sp) return;
  const aid = agentIdOf(sid, session);
  const prev = s.agents.get(aid);
  const label = str(e.label, WORK_LIMITS.label);
  const pane = str(e.pane, WORK_LIMITS.label);
  const cwd = str(e.cwd, WORK_LIMITS.label * 5);
  const mode = str(e.mode, WORK_LIMITS.label);
  const origin: AgentOrigin = e.origin === 'bridge' || e.origin === 'hook' || e.origin === 'manual' ? e.origin : (prev?.origin ?? 'manual');
  const reported: AgentState | null = e.state === 'idle' || e.state === 'working' || e.state === 'blocked' ? e.state : null;
  if (!prev) {
    const chat = agentChatOf(aid);
    const a: Agent = {
      id: aid,
      space: sid,
      session,
      label: label || session,
      pane: pane ?? '',
      cwd: cwd ?? '',
      origin,
      trustedLocal: origin !== 'bridge',
      callable: origin === 'bridge',
      mode: mode ?? '',
      state: reported ?? 'idle',
      conversation: chat,
      queue: [],
      running: null,
      firstSeen: at,
      lastSeen: at,
      endedAt: null,
      rev: d.pos,
    };
    putAgent(d, a);
    newConversation(d, { id: chat, kind: 'agent', title: a.label, createdBy: sp.owner, createdAt: at, agent: aid });
    say(d, chat, 'system', `${a.label} appeared on ${sp.name}${a.trustedLocal ? ' (trusted local)' : ''}`, SYSTEM, at);
    return;
  }
  const next: Agent = {
    ...prev,
    label: label || prev.label,
    pane: pane ?? prev.pane,
    cwd: cwd ?? prev.cwd,
    mode: mode ?? prev.mode,
    lastSeen: Math.max(prev.lastSeen, at),
    // A running execution decides working/blocked; otherwise the report does.
    state: prev.running ? prev.state : (reported ?? (prev.state === 'ended' ? 'idle' : prev.state)),
    endedAt: null,
  };
  const moved = next.pane !== prev.pane && prev.pane !== '';
  const revived = prev.state === 'ended';
  const renamed = next.label !== prev.label;
  if (!moved && !revived && !renamed && next.cwd === prev.cwd && next.mode === prev.mode && next.state === prev.state) return;
  putAgent(d, next);
  if (renamed) {
    const c = s.conversations.get(prev.conversation);
    if (c) {
      if (c.title !== next.label) {
        if (d.undo) {
          const title = c.title;
          d.undo.push(() => void (c.title = title));
        }
        c.title = next.label;
      }
      touchConversation(d, c);
    }
  }
  if (moved) say(d, prev.conversation, 'system', `moved from ${prev.pane} to ${next.pane}`, SYSTEM, at);
  if (revived) say(d, prev.conversation, 'system', 'seen again', SYSTEM, at);
}

/** An agent ended: nothing is deleted. */
function agentEnded(d: Draft, e: Rec, at: number): void {
  const s = d.s;
  const sid = id(e.space);
  const session = id(e.session);
  if (!sid || !session) return;
  const a = s.agents.get(agentIdOf(sid, session));
  if (!a || a.state === 'ended') return;
  const reason = str(e.reason, WORK_LIMITS.reason) || 'ended';
  // Waiting commands can no longer run on it.
  for (const cmdId of a.queue) {
    const c = s.commands.get(cmdId);
    if (c) putCommand(d, { ...c, status: 'cancelled' });
  }
  if (a.running) finishExecution(d, a.running, 'failed', `the agent ended (${reason})`, at);
  const cur = s.agents.get(a.id)!;
  putAgent(d, { ...cur, state: 'ended', endedAt: at, queue: [], running: null });
  say(d, a.conversation, 'system', `ended: ${reason}`, SYSTEM, at);
}

/** The Space's owner makes an agent callable by teammates, or read-only to them. */
function agentCallable(d: Draft, e: Rec, at: number, by: Who | null): void {
  const s = d.s;
  const aid = id(e.agent);
  const a = aid ? s.agents.get(aid) : undefined;
  if (!a || typeof e.callable !== 'boolean' || a.callable === e.callable || !by) return;
  putAgent(d, { ...a, callable: e.callable });
  say(d, a.conversation, 'system', `${by.name} made it ${e.callable ? 'callable by teammates' : 'read-only to teammates'}`, SYSTEM, at);
}

export const AGENT_STEPS: Readonly<Record<string, WorkStep>> = {
  'agent.observed': agentObserved,
  'agent.ended': agentEnded,
  'agent.callable': agentCallable,
};
