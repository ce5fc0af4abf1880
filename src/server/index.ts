// The server layer's public surface.
export { startRoost, DEFAULTS, VERSION, PACKAGE_ROOT, type Roost, type RoostConfig } from './app.js';
export { HttpError, type ErrorKind } from './http.js';
export { Live, LiveChannel, LossyChannel, Frame, type LiveSource, type ScopeSpec, type Need } from './live/index.js';
export { FoldedStream, type FoldSpec } from './folded.js';
export { FloorService, FLOOR_STREAM } from './floor.js';
export { FleetService } from './fleet/service.js';
export { FLEET_STREAM_PREFIX, localCaller, type Caller, type FleetOptions } from './fleet/names.js';
export { LocalAccess, projectOf, grantOf, DEFAULT_PROJECT, type Access, type AccessChange, type Principal, type Grant, type Role } from './access.js';
export { SharedAccess } from './identity/access.js';
export { IdentityService } from './identity/service.js';
export { hashPassword, verifyPassword } from './identity/secrets.js';
export { WorkService, type WorkOptions, type ProjectInfo } from './work/service.js';
export { WORK_PREFIX, SPACES_STREAM } from './work/book.js';
export { Presence, PRESENCE_EXPIRE_MS } from './presence.js';
