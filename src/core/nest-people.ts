// People in nests (docs/flock.md "Who posts as whom", docs/security.md): the
// author label a person's nest messages carry. The contract's wire knows one
// person, "owner"; in shared mode a project has several, so:
// - a person with the owner role posts as "owner" (owner rights: only an
//   "owner" reply decides an ask_owner);
// - any other member posts as "member:<their name>", a label no crow, service
//   role or the harness can have (crow names start with a letter and have no
//   ":"), short enough for a `to` (40 characters).
// Local mode has one person, the owner. The server derives the label from
// the authenticated principal; a body's `author` is only checked against it.
// Pure: used by the fold, the server's post check and the web app.

export const MEMBER_PREFIX = 'member:';
/** Characters of a member's name kept in the label (the label fits a `to`: 7 + 32 ≤ 40). */
export const MEMBER_NAME_MAX = 32;

const CONTROLS = /[\u0000-\u001f\u007f\u2028\u2029]/g;

/** The label of a member who is not the owner: `member:<name>`, the name on one line, cut to MEMBER_NAME_MAX. */
export function memberAuthor(name: string): string {
  let n = name.replace(CONTROLS, ' ').replace(/\s+/g, ' ').trim();
  if (n.length > MEMBER_NAME_MAX) {
    n = n.slice(0, MEMBER_NAME_MAX);
    const c = n.charCodeAt(n.length - 1);
    if (c >= 0xd800 && c <= 0xdbff) n = n.slice(0, -1);
    n = n.trim();
  }
  return MEMBER_PREFIX + (n || '?');
}

/** Whether `v` is a member label (`member:` and 1 to MEMBER_NAME_MAX characters on one line, no edge spaces). */
export function isMemberAuthor(v: unknown): v is string {
  if (typeof v !== 'string' || !v.startsWith(MEMBER_PREFIX)) return false;
  const n = v.slice(MEMBER_PREFIX.length);
  return n.length >= 1 && n.length <= MEMBER_NAME_MAX && n === n.trim() && !/[\u0000-\u001f\u007f\u2028\u2029]|\s{2}/.test(n);
}

/** A person's author label from their role in the project and their name. */
export function personAuthor(role: string, name: string): string {
  return role === 'owner' ? 'owner' : memberAuthor(name);
}

/** A person's label as people read it: "owner", or the member's name. */
export function personWords(author: string): string {
  return isMemberAuthor(author) ? author.slice(MEMBER_PREFIX.length) : author;
}
