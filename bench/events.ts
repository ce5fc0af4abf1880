// Believable synthetic floor events for benches: `agents` agents in `teams`
// teams, mostly tool and status events, some messages and tasks.
import type { FloorEvent } from '../src/core/floor.js';

const TOOLS = ['Read', 'Edit', 'Bash', 'Grep', 'Write', 'WebFetch'];
const STATUSES = ['thinking', 'working', 'waiting', 'idle'];

export function syntheticEvents(agents: number, teams: number, t0: number): (i: number) => FloorEvent {
  return (i: number) => {
    const a = i % agents;
    const agent = `agent-${a}`;
    const team = `team-${a % teams}`;
    const ts = t0 + i;
    const k = (i * 7919) % 100;
    if (i < agents) return { type: 'join', agent, team, role: a < teams ? 'lead' : 'dev', source: 'bench', ts };
    if (k < 55) return { type: 'tool', agent, tool: TOOLS[i % TOOLS.length], activity: `step ${i} of the plan`, ts };
    if (k < 85) return { type: 'status', agent, status: STATUSES[i % STATUSES.length], activity: `thinking about item ${i}`, ts };
    if (k < 95) return { type: 'message', agent, to: `agent-${(a + teams) % agents}`, text: `note ${i}`, ts };
    return { type: 'task', agent, task: `ship item ${i}`, ts };
  };
}
