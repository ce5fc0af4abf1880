// Who this browser posts as. Local mode: a label the person may type (the
// fleet board's "Your name"), sent as the `Roost-Name` header so the owner's
// tabs can be told apart. Shared mode: the signed-in account, which the
// server takes from the cookie; the label is then not sent.

import { getJson } from './api.js';
import { loadPref, savePref } from './prefs.js';

const NAME_KEY = 'roost.name';

export function myName(): string {
  return loadPref(NAME_KEY) ?? '';
}

export function setMyName(name: string): void {
  savePref(NAME_KEY, name.trim());
}

/** Set once the server says it runs in shared mode: the label is then meaningless and not sent. */
let sharedMode = false;

/** The headers that label a write with this tab's name (none in shared mode, or without a name). */
export function nameHeaders(): Record<string, string> {
  const name = myName();
  return name && !sharedMode ? { 'roost-name': name } : {};
}

export type Me = { mode: 'local' | 'shared'; name: string } | { mode: 'unknown'; name: '' };

/** Who the server takes this browser for (`GET /auth/me`); `unknown` when it cannot say (not signed in, or an older server). */
export async function whoAmI(): Promise<Me> {
  const r = await getJson<{ mode?: unknown; user?: { name?: unknown } }>('/auth/me');
  if (!r.ok || !r.body) return { mode: 'unknown', name: '' };
  const name = typeof r.body.user?.name === 'string' ? r.body.user.name : '';
  sharedMode = r.body.mode === 'shared';
  return sharedMode ? { mode: 'shared', name } : { mode: 'local', name };
}
