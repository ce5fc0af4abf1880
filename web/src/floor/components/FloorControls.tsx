// The floor's tools for a big floor: find an agent by name, filter by status,
// team and role, go to one team's room, and zoom (the same as the wheel, a
// pinch and the + − 0 keys). What is shown is decided in camera.ts; this is
// only the words and buttons.
import { useState } from 'preact/hooks';
import type { Agent, FloorState, Status } from '../../../../src/core/floor.js';
import { searchAgents, type Filters } from '../camera.js';
import { STATUS_LABEL } from '../look.js';
import '../scale.css';

const STATUSES = Object.keys(STATUS_LABEL) as Status[];
/** "Needs you": the two statuses a person acts on, as one choice. */
const NEEDS_YOU = 'waiting,error';

export function FloorControls(props: {
  state: FloorState;
  roles: string[];
  filters: Filters;
  shown: number;
  total: number;
  zoom: number;
  fitted: boolean;
  onFilters: (f: Filters) => void;
  onFind: (a: Agent) => void;
  onFocusTeam: (team: string) => void;
  onZoom: (factor: number) => void;
  onFit: () => void;
  pulse: boolean;
  onPulse: () => void;
}) {
  const { filters: f, state } = props;
  const [q, setQ] = useState('');
  const [open, setOpen] = useState(false);
  const hits = q.trim() ? searchAgents(state, q) : [];
  const teams = [...state.teams.values()].sort((a, b) => a.name.localeCompare(b.name));
  const status = f.statuses.join(',');
  const filtered = f.statuses.length > 0 || f.team !== '' || f.role !== '';
  const pick = (a: Agent) => {
    props.onFind(a);
    setOpen(false);
  };
  return (
    <div class="floor-tools" role="toolbar" aria-label="Find, filter and zoom" data-testid="floor-tools">
      <div class="find">
        <input
          type="search"
          placeholder="Find an agent…"
          aria-label="Find an agent by name"
          data-testid="floor-search"
          value={q}
          aria-controls={open && q.trim() !== '' ? 'floor-search-hits' : undefined}
          onInput={(e) => {
            setQ((e.target as HTMLInputElement).value);
            setOpen(true);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && hits.length) pick(hits[0]);
            else if (e.key === 'Escape') {
              setQ('');
              setOpen(false);
              e.stopPropagation();
            }
          }}
        />
        {open && q.trim() !== '' && (
          <ul id="floor-search-hits" class="hits" role="listbox" data-testid="floor-search-hits">
            {hits.length === 0 && <li class="none">No agent is called that</li>}
            {hits.map((a) => (
              <li key={a.id} role="option" aria-selected={false}>
                <button onClick={() => pick(a)} data-testid={`hit-${a.id}`}>
                  <span class="name">{a.name}</span> <span class="muted">{state.teams.get(a.team)?.name ?? a.team}</span>
                </button>
              </li>
            ))}
          </ul>
        )}
      </div>
      <label>
        <span class="sr-only">Status</span>
        <select data-testid="filter-status" value={status} onChange={(e) => props.onFilters({ ...f, statuses: (e.target as HTMLSelectElement).value ? ((e.target as HTMLSelectElement).value.split(',') as Status[]) : [] })}>
          <option value="">Every status</option>
          <option value={NEEDS_YOU}>Needs you</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {STATUS_LABEL[s]}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span class="sr-only">Team</span>
        <select data-testid="filter-team" value={f.team} onChange={(e) => props.onFilters({ ...f, team: (e.target as HTMLSelectElement).value })}>
          <option value="">Every team</option>
          {teams.map((t) => (
            <option key={t.id} value={t.id}>
              {t.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span class="sr-only">Role</span>
        <select data-testid="filter-role" value={f.role} onChange={(e) => props.onFilters({ ...f, role: (e.target as HTMLSelectElement).value })}>
          <option value="">Every role</option>
          {props.roles.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </label>
      {filtered && (
        <>
          <span class="shown" data-testid="filter-shown">{`${props.shown} of ${props.total} shown`}</span>
          <button class="tool" onClick={() => props.onFilters({ statuses: [], team: '', role: '', search: '' })}>
            Clear filters
          </button>
        </>
      )}
      <label>
        <span class="sr-only">Go to a room</span>
        <select
          data-testid="focus-team"
          value=""
          onChange={(e) => {
            const v = (e.target as HTMLSelectElement).value;
            if (v) props.onFocusTeam(v);
            (e.target as HTMLSelectElement).value = '';
          }}
        >
          <option value="">Go to room…</option>
          {teams.map((t) => (
            <option key={t.id} value={t.id}>
              {t.name}
            </option>
          ))}
        </select>
      </label>
      <button class="tool" aria-pressed={props.pulse} onClick={props.onPulse} data-testid="pulse-toggle" title="Events per minute per team, the last hour">
        Pulse
      </button>
      <span class="zoom" role="group" aria-label="Zoom">
        <button class="tool" aria-label="Zoom out" title="Zoom out (−)" onClick={() => props.onZoom(1 / 1.25)}>
          −
        </button>
        <span class="pct" data-testid="zoom-level" aria-live="polite">{`${Math.round(props.zoom * 100)}%`}</span>
        <button class="tool" aria-label="Zoom in" title="Zoom in (+)" onClick={() => props.onZoom(1.25)}>
          +
        </button>
        <button class="tool" aria-pressed={props.fitted} title="Fit the floor (0)" onClick={props.onFit} data-testid="zoom-fit">
          Fit
        </button>
      </span>
    </div>
  );
}
