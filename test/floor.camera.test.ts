// The floor's camera and filters (web/src/floor/camera.ts), without a browser:
// the default view keeps names readable and fills the width, zooming keeps
// the point under the pointer still, the floor cannot be panned out of sight,
// and the filters and the search pick the agents a person asked for.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEvent, emptyFloor, type FloorEvent, type FloorState } from '../src/core/floor.js';
import { keepHighWater, sizeRooms, teamNeeds } from '../web/src/floor/layout.js';
import { MARGIN, NAME_FONT_PX, READABLE_SCALE, arrange, clampCamera, matcher, searchAgents, zoomAt, NO_FILTERS } from '../web/src/floor/camera.js';

function floor(events: FloorEvent[]): FloorState {
  const s = emptyFloor();
  let ts = 1_000;
  for (const e of events) applyEvent(s, { ts: ts++, ...e });
  return s;
}

const team = (name: string, n: number): FloorEvent[] =>
  Array.from({ length: n }, (_, i) => ({ type: 'status', agent: { id: `${name}-${i}`, name: `${name} ${i}` }, team: name, role: i === 0 ? 'lead' : i % 2 ? 'coder' : 'tester', status: i % 3 ? 'working' : 'waiting' }));

function rooms(s: FloorState, shown: Parameters<typeof teamNeeds>[1] = null) {
  const needs = teamNeeds(s, shown);
  keepHighWater(needs, new Map());
  return sizeRooms([...s.teams.values()].filter((t) => needs.has(t.id)), needs);
}

describe('the floor camera', () => {
  test('a small floor fits whole; a big one fills the width at a readable scale', () => {
    const small = rooms(floor(team('A', 4)));
    const a = arrange(small, 1100, 800);
    assert.equal(a.whole, true);
    assert.ok(a.fit.scale * NAME_FONT_PX >= 11);

    const s = floor(['A', 'B', 'C', 'D', 'E', 'F'].flatMap((t) => team(t, 10)));
    const big = rooms(s);
    const b = arrange(big, 1100, 800);
    assert.equal(b.whole, false, '60 agents do not fit one screen readably');
    assert.ok(b.fit.scale >= READABLE_SCALE && b.fit.scale * NAME_FONT_PX >= 11.5 - 1e-9);
    assert.ok(b.w * b.fit.scale > 0.85 * 1100, `the rooms span ${Math.round(b.w * b.fit.scale)} of 1100 px`);
    assert.equal(b.fit.offY, MARGIN, 'the view starts at the top');
    // A phone: readable, from the top left.
    const p = arrange(rooms(s), 390, 700);
    assert.ok(p.fit.scale >= READABLE_SCALE - 1e-9);
  });

  test('zooming keeps the point under the pointer where it is; panning cannot lose the floor', () => {
    const c = { scale: 0.5, offX: 10, offY: 20 };
    const z = zoomAt(c, 2, 300, 200);
    const wx = (300 - c.offX) / c.scale;
    assert.ok(Math.abs(z.offX + wx * z.scale - 300) < 1e-9);
    assert.equal(zoomAt(c, 1e9, 0, 0).scale, 3);
    const far = clampCamera({ scale: 1, offX: -1e6, offY: 1e6 }, 1000, 800, 2000, 3000);
    assert.ok(far.offX + 2000 >= 250 && far.offY <= 800 - 200, 'a quarter of the canvas still shows the floor');
  });

  test('filters and search pick who a person asked for', () => {
    const s = floor([...team('Pay', 6), ...team('Web', 4)]);
    assert.equal(matcher(NO_FILTERS), null);
    const waiting = matcher({ ...NO_FILTERS, statuses: ['waiting'] })!;
    assert.deepEqual([...s.agents.values()].filter(waiting).map((a) => a.id), ['Pay-0', 'Pay-3', 'Web-0', 'Web-3']);
    const webTesters = matcher({ ...NO_FILTERS, team: 'Web', role: 'TESTER' })!;
    assert.deepEqual([...s.agents.values()].filter(webTesters).map((a) => a.id), ['Web-2']);
    // Filtered rooms: only those with someone shown.
    assert.deepEqual(rooms(s, webTesters).map((r) => r.team.id), ['Web']);
    assert.deepEqual(searchAgents(s, 'web 3').map((a) => a.id), ['Web-3']);
    assert.deepEqual(searchAgents(s, '.*'), [], 'a pattern is just text');
    assert.equal(searchAgents(s, 'pay').length, 6);
  });
});
