// The floor's geometry (web/src/floor/layout.ts), without a browser: rooms fit
// their agents, never overlap, keep their size while a helper comes and goes,
// and the world fits the canvas. The canvas itself is checked in
// floor.browser.test.ts; these are the rules a person would notice as desks
// jumping around or characters sitting outside their room.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEvent, emptyFloor, type FloorEvent, type FloorState } from '../src/core/floor.js';
import {
  CELL_H,
  CELL_W,
  GAP,
  boardRect,
  cellOf,
  doorOf,
  fitView,
  keepHighWater,
  layoutKey,
  pack,
  planeArc,
  seatIn,
  sizeRooms,
  teamNeeds,
  type Rect,
  type Room,
} from '../web/src/floor/layout.js';

function floor(events: FloorEvent[]): FloorState {
  const s = emptyFloor();
  let ts = 1_000;
  for (const e of events) applyEvent(s, { ts: ts++, ...e });
  return s;
}

/** `n` agents in `team` (the first one the lead when `lead`). */
function team(name: string, n: number, lead = false): FloorEvent[] {
  return Array.from({ length: n }, (_, i) => ({ type: 'status', agent: `${name}-${i}`, team: name, role: lead && i === 0 ? 'lead' : 'coder', status: 'working' }));
}

/** Rooms laid out as the scene does: sized for their needs, then packed for a canvas of `aspect`. */
function lay(s: FloorState, aspect = 1.6, highWater = new Map<string, number>()): { rooms: Map<string, Room>; world: { w: number; h: number } } {
  const needs = teamNeeds(s);
  keepHighWater(needs, highWater);
  const sized = sizeRooms(s.teams.values(), needs);
  const world = pack(sized, aspect);
  return { rooms: new Map(sized.map((r) => [r.team.id, r])), world };
}

const inside = (a: Rect, b: Rect) => a.x >= b.x && a.y >= b.y && a.x + a.w <= b.x + b.w && a.y + a.h <= b.y + b.h;
const overlap = (a: Rect, b: Rect) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
const cellRect = (r: Room, desk: number): Rect => ({ ...cellOf(r, desk), w: CELL_W, h: CELL_H });

describe('the floor layout', () => {
  test('every agent has a desk cell inside its room, and no two cells of a room overlap', () => {
    const s = floor([...team('Payments', 9, true), ...team('Web', 2), ...team('Search', 23, true)]);
    const { rooms } = lay(s);
    for (const r of rooms.values()) {
      const cells = [...s.agents.values()].filter((a) => a.team === r.team.id).map((a) => cellRect(r, a.desk));
      for (const c of cells) assert.ok(inside(c, r), `a desk of ${r.team.name} lies outside its room`);
      for (let i = 0; i < cells.length; i++) for (let j = i + 1; j < cells.length; j++) assert.ok(!overlap(cells[i], cells[j]), `two desks of ${r.team.name} overlap`);
      // The whiteboard and the door are on the room's walls, clear of the desks.
      const board = boardRect(r);
      assert.ok(board.y + board.h <= cellRect(r, 0).y + 4, 'the whiteboard sits above the desks');
      assert.equal(doorOf(r).y > r.y + r.h, true, 'the door is in the bottom wall');
    }
  });

  test('the lead sits at the head desk, centred above the others', () => {
    const s = floor(team('Payments', 4, true));
    const { rooms } = lay(s);
    const r = rooms.get('Payments')!;
    const lead = s.agents.get('Payments-0')!;
    assert.equal(lead.desk, 0);
    const head = seatIn(rooms, lead)!;
    assert.equal(Math.round(head.x), Math.round(r.x + r.w / 2), 'centred');
    for (const a of s.agents.values()) if (a !== lead) assert.ok(seatIn(rooms, a)!.y > head.y, `${a.id} sits below the lead`);
  });

  test('rooms never overlap, with a gap between them, whatever their sizes and the canvas shape', () => {
    const s = floor([...team('A', 1), ...team('B', 30, true), ...team('C', 7), ...team('D', 3, true), ...team('E', 12)]);
    for (const aspect of [0.5, 1, 1.6, 3]) {
      const { rooms, world } = lay(s, aspect);
      const all = [...rooms.values()];
      for (const r of all) assert.ok(inside(r, { x: 0, y: 0, w: world.w, h: world.h }), 'every room is inside the world');
      for (let i = 0; i < all.length; i++)
        for (let j = i + 1; j < all.length; j++) {
          const a = all[i];
          const grown = { x: a.x - GAP + 1, y: a.y - GAP + 1, w: a.w + 2 * GAP - 2, h: a.h + 2 * GAP - 2 };
          assert.ok(!overlap(grown, all[j]), `${a.team.name} and ${all[j].team.name} are closer than the gap (aspect ${aspect})`);
        }
    }
  });

  test('the packing follows the canvas: a wide canvas gets fewer shelves than a tall one', () => {
    const s = floor(['A', 'B', 'C', 'D', 'E', 'F'].flatMap((t) => team(t, 4)));
    const shelves = (aspect: number) => new Set([...lay(s, aspect).rooms.values()].map((r) => r.y)).size;
    assert.ok(shelves(4) < shelves(0.4), `wide: ${shelves(4)} shelves, tall: ${shelves(0.4)}`);
    assert.equal(shelves(100), 1, 'a very wide canvas puts every room on one shelf');
  });

  test('a room grows at once but keeps its size while a helper leaves and another comes (no reshuffle)', () => {
    const highWater = new Map<string, number>();
    const size = (s: FloorState) => {
      const r = lay(s, 1.6, highWater).rooms.get('Payments')!;
      return { w: r.w, h: r.h };
    };
    const twelve = size(floor(team('Payments', 12)));
    const thirteen = size(floor(team('Payments', 13)));
    assert.ok(thirteen.h > twelve.h, 'a thirteenth desk needs a fourth row: the room grows at once');
    assert.deepEqual(size(floor(team('Payments', 12))), thirteen, 'one fewer again: the room stays as it was');
    const small = size(floor(team('Payments', 2)));
    assert.ok(small.w * small.h < twelve.w * twelve.h, 'far below its high-water mark, it shrinks');
  });

  test('the layout key changes exactly when a room or the canvas changes size', () => {
    const s = floor([...team('A', 3), ...team('B', 5)]);
    const key = (st: FloorState, w = 800, h = 600) => layoutKey(w, h, teamNeeds(st));
    assert.equal(key(s), key(floor([...team('A', 3), ...team('B', 5)])));
    assert.notEqual(key(s), key(s, 801));
    assert.notEqual(key(s), key(floor([...team('A', 3), ...team('B', 6)])));
    // A status change is not a layout change (the room's attention halo is repainted, not re-laid out).
    const waiting = floor([...team('A', 3), ...team('B', 5), { type: 'status', agent: 'B-1', status: 'waiting' }]);
    assert.equal(key(waiting), key(s));
    assert.equal(teamNeeds(waiting).get('B')!.attention, 'waiting');
  });

  test('the world fits the canvas, centred, and is never blown up past 115%', () => {
    const f = fitView(1000, 500, 2000, 500);
    assert.ok(2000 * f.scale <= 1000 - 32 + 1e-9 && 500 * f.scale <= 500 - 32 + 1e-9, 'inside the margins');
    assert.equal(Math.round(f.offX * 2 + 2000 * f.scale), 1000, 'centred horizontally');
    assert.equal(fitView(4000, 3000, 100, 100).scale, 1.15, 'a small floor on a big canvas');
    assert.ok(fitView(10, 10, 10_000, 10_000).scale > 0, 'a tiny canvas still draws');
  });

  test('a paper plane leaves the sender, lands on the recipient, and flies above both', () => {
    const arc = planeArc({ fx: 100, fy: 400, tx: 700, ty: 300 });
    assert.deepEqual(arc.at(0), { x: 100, y: 400 });
    assert.deepEqual(arc.at(1), { x: 700, y: 300 });
    assert.ok(arc.at(0.5).y < 300, 'the middle of the flight is above both ends');
    assert.ok(Math.abs(arc.angle(0.5)) < Math.PI / 2, 'it flies towards the recipient');
  });
});
