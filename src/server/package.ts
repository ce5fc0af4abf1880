// Where the package lives and its version: a module of its own, so a CLI verb
// that needs only these (hooks, mcp, version) does not load the whole server.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root (this file lives at dist/src/server/package.js, or src/server/package.ts under tsx). */
export const PACKAGE_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), ...(import.meta.url.includes('/dist/') ? ['..', '..', '..'] : ['..', '..']));

export const VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
