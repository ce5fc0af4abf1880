// The server layer's public surface.
export { startRoost, DEFAULTS, VERSION, PACKAGE_ROOT, type Roost, type RoostConfig } from './app.js';
export { HttpError, type ErrorKind } from './http.js';
export { LiveChannel, type Frame, type LiveSource } from './live.js';
export { FloorService, FLOOR_STREAM } from './floor.js';
export { SessionsService, SESSIONS_STREAM_PREFIX, localCaller, type Caller, type SessionsOptions } from './sessions.js';
export { LocalAccess, projectOf, grantOf, DEFAULT_PROJECT, type Access, type Principal, type Grant, type Role } from './access.js';
export { SharedAccess, IdentityService, createOwner, loadIdentity, hashPassword, verifyPassword } from './identity.js';
export { WorkService, WORK_PREFIX, SPACES_STREAM, type WorkOptions, type ProjectInfo } from './work.js';
