// What this person has read, per conversation: the message count seen, kept
// in this browser only (never shared). A conversation is unread while it has
// more messages than that.

import { useEffect, useRef, useState } from 'preact/hooks';
import type { Conversation } from '../../../src/core/work.js';
import type { WorkModel } from '../live/work.js';
import { loadJson, saveJson } from '../shared/prefs.js';

const READ_KEY = 'roost.work.read';

/**
 * `open` is the conversation on screen (under `openKey`: `<project>/<id>`, or
 * `private/general`): it counts as read as messages arrive. The first time a
 * project's model is ready, what exists counts as read unless a count was kept.
 */
export function useReadMarks(project: string | null, model: WorkModel, openKey: string | null, open: Conversation | null): (key: string, c: Conversation) => boolean {
  const [read, setRead] = useState<Record<string, number>>(() => loadJson(READ_KEY, {}));
  const seeded = useRef(new Set<string>());
  useEffect(() => {
    if (!model.ready || !project || seeded.current.has(project)) return;
    seeded.current.add(project);
    setRead((r) => {
      const next = { ...r };
      for (const c of Object.values(model.conversations)) if (next[`${project}/${c.id}`] === undefined) next[`${project}/${c.id}`] = c.messages.length;
      return next;
    });
  }, [model.ready, project]);
  useEffect(() => {
    if (openKey && open && read[openKey] !== open.messages.length) setRead((r) => ({ ...r, [openKey]: open.messages.length }));
  }, [openKey, open?.messages.length]);
  useEffect(() => saveJson(READ_KEY, read), [read]);
  return (key, c) => c.messages.length > (read[key] ?? 0);
}
