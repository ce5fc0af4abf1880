// The bottom layer: pure folds and wire types. Nothing here imports from above,
// and the fold modules import nothing at all (a test checks).
export * from './floor.js';
export * from './floor-wire.js';
export * from './fleet.js';
export * from './fleet-wire.js';
export * from './window.js';
export * from './flock.js';
export * from './flock-wire.js';
export * from './personas.js';
