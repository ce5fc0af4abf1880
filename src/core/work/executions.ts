// Executions: the head of an idle agent's queue starts, blocks on a decision
// (pointing at the board approval it waits on) and resumes, says what the
// agent said, and finishes with a result (its command done or failed).

import { WORK_LIMITS, type Execution } from './model.js';
import { boardId, id, pendingApproval, str, type Rec } from './read.js';
import { SYSTEM, putAgent, putCommand, putExecution, putResult, say, type Draft, type WorkStep } from './draft.js';

/** The head of an idle agent's queue starts. */
function executionStarted(d: Draft, e: Rec, at: number): void {
  const s = d.s;
  const cid = id(e.command);
  const c = cid ? s.commands.get(cid) : undefined;
  if (!c || c.status !== 'queued') return;
  const a = s.agents.get(c.agent);
  // FIFO: only the head of an idle agent's queue may start.
  if (!a || a.running || a.queue[0] !== c.id || a.state === 'ended') return;
  const xid = `x-${c.id}`;
  putCommand(d, { ...c, status: 'running' });
  putExecution(d, { id: xid, command: c.id, agent: a.id, conversation: c.conversation, state: 'running', blockedOn: '', approval: null, startedAt: at, endedAt: null, result: null, rev: d.pos });
  putAgent(d, { ...a, queue: a.queue.slice(1), running: xid, state: 'working' });
}

/** An execution blocked (on a decision, maybe a board approval it points at), or resumed. */
function executionBlockedOrResumed(d: Draft, e: Rec, at: number): void {
  const s = d.s;
  const x = execOf(d, e);
  if (!x || (x.state !== 'running' && x.state !== 'blocked')) return;
  const blocked = e.type === 'execution.blocked';
  // A resume may name the approval it ends (`rid`): with two pending at once, the first
  // decision must not clear the pointer the second still waits on. One without (an older
  // event) resumes whatever the execution waits for.
  const rid = blocked ? null : boardId(e.rid);
  if (rid && x.approval && x.approval.rid !== rid) return;
  const reason = blocked ? str(e.reason, WORK_LIMITS.reason) || 'waiting for a decision' : '';
  // A blocked report may say where its approval waits; resuming clears it.
  const approval = blocked ? pendingApproval(e.approval) : null;
  if (x.state === (blocked ? 'blocked' : 'running') && x.blockedOn === reason && (x.approval?.rid ?? null) === (approval?.rid ?? null)) return;
  putExecution(d, { ...x, state: blocked ? 'blocked' : 'running', blockedOn: reason, approval });
  const a = s.agents.get(x.agent);
  if (a) putAgent(d, { ...a, state: blocked ? 'blocked' : 'working' });
  if (blocked) say(d, x.conversation, 'system', `blocked: ${reason}`, SYSTEM, at, x.command);
}

/** What the agent said, while the execution runs. */
function executionOutput(d: Draft, e: Rec, at: number): void {
  const s = d.s;
  // A durable piece of what the agent said (a turn), not terminal frames.
  const x = execOf(d, e);
  const text = str(e.text, WORK_LIMITS.text);
  if (!x || !text || x.state === 'done' || x.state === 'failed') return;
  const a = s.agents.get(x.agent);
  say(d, x.conversation, 'agent', text, { uid: `agent:${x.agent}`, name: a?.label ?? 'agent' }, at, x.command);
}

/** An execution finished, done or failed. */
function executionFinished(d: Draft, e: Rec, at: number): void {
  const x = execOf(d, e);
  if (!x || x.state === 'done' || x.state === 'failed') return;
  const status = e.status === 'failed' ? 'failed' : 'done';
  finishExecution(d, x.id, status, str(e.result, WORK_LIMITS.text) ?? '', at);
}

export function execOf(d: Draft, e: Rec): Execution | undefined {
  const cid = id(e.command);
  return cid ? d.s.executions.get(`x-${cid}`) : undefined;
}

export function finishExecution(d: Draft, xid: string, status: 'done' | 'failed', text: string, at: number): void {
  const s = d.s;
  const x = s.executions.get(xid);
  if (!x) return;
  const rid = `r-${x.command}`;
  putExecution(d, { ...x, state: status, blockedOn: '', approval: null, endedAt: at, result: rid });
  const c = s.commands.get(x.command);
  if (c) putCommand(d, { ...c, status });
  putResult(d, { id: rid, execution: x.id, command: x.command, agent: x.agent, conversation: x.conversation, status, text, at, rev: d.pos });
  const a = s.agents.get(x.agent);
  if (a && a.running === x.id) putAgent(d, { ...a, running: null, state: a.state === 'ended' ? 'ended' : 'idle' });
  say(d, x.conversation, 'result', text || (status === 'done' ? 'done' : 'failed'), { uid: `agent:${x.agent}`, name: a?.label ?? 'agent' }, at, x.command);
}

export const EXECUTION_STEPS: Readonly<Record<string, WorkStep>> = {
  'execution.started': executionStarted,
  'execution.blocked': executionBlockedOrResumed,
  'execution.resumed': executionBlockedOrResumed,
  'execution.output': executionOutput,
  'execution.finished': executionFinished,
};
