// The first account, made at the machine (`roost admin create-owner`), and the
// one question the CLI asks of the identity stream before serving (is there an
// account yet?). Both read or write the store directly: the server need not run.

import { DEFAULT_PROJECT } from '../server/access.js';
import { checkPassword, hashPassword, newId } from '../server/identity/secrets.js';
import { IDENTITY_STREAM, LOGIN_PATTERN, applyIdentity, emptyIdentity, type IdentityState } from '../core/identity.js';
import type { EventStore } from '../storage/types.js';

/** Reads the identity stream once (for the CLI: is there an account yet?). */
export async function loadIdentity(store: EventStore): Promise<IdentityState> {
  const s = emptyIdentity();
  let pos = 0;
  for (;;) {
    const batch = await store.read(IDENTITY_STREAM, pos, 5000);
    for (const e of batch) {
      try {
        applyIdentity(s, JSON.parse(e.body));
      } catch {}
      pos = e.position;
    }
    if (batch.length < 5000) return s;
  }
}

/** The first owner: an administrator who owns the `default` project. Written straight to the store. */
export async function createOwner(store: EventStore, login: string, password: string, name?: string): Promise<{ uid: string }> {
  if (!LOGIN_PATTERN.test(login)) throw new Error('the login is 1 to 64 lowercase letters, digits, ".", "-" or "_"');
  const why = checkPassword(password);
  if (why) throw new Error(why);
  const s = await loadIdentity(store);
  if (s.byLogin.has(login)) throw new Error(`the login "${login}" exists already`);
  const uid = newId('u_');
  const ts = Date.now();
  const events: Record<string, unknown>[] = [{ type: 'user.created', uid, login, name: name ?? login, passwordHash: await hashPassword(password), admin: true, by: 'cli', ts }];
  if (!s.projects.has(DEFAULT_PROJECT)) events.push({ type: 'project.created', id: DEFAULT_PROJECT, name: 'Default', by: uid, ts });
  events.push({ type: 'member.set', project: DEFAULT_PROJECT, uid, role: 'owner', by: 'cli', ts });
  await store.append(IDENTITY_STREAM, events.map((e) => ({ type: String(e.type), body: JSON.stringify(e) })));
  return { uid };
}
