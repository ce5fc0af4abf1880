import { useEffect, useState } from 'preact/hooks';
import type { WorkModel } from '../../live/work.js';
import { getJson, postJson } from '../../shared/api.js';

/**
 * Spaces: my workstations (registered by `roost bridge`) and the ones
 * contributed to this project. Only a Space's owner contributes it; its owner
 * or a project owner revokes it (future execution stops; chats stay).
 */
export function SpacesBox({ project, model, me, role, tick }: { project: string; model: WorkModel; me: string; role: string | null; tick: number }) {
  const [mine, setMine] = useState<{ id: string; name: string }[]>([]);
  const [err, setErr] = useState<string | null>(null);
  const contributedRevs = Object.values(model.spaces)
    .map((s) => s.rev)
    .join(',');
  useEffect(() => {
    void getJson<{ spaces: { id: string; name: string }[] }>('/api/v2/spaces').then((r) => r.ok && setMine(r.body.spaces));
  }, [project, contributedRevs, tick]);
  const rows = new Map<string, { id: string; name: string; owner: string; ownerUid: string; contributed: boolean }>();
  for (const s of Object.values(model.spaces)) rows.set(s.id, { id: s.id, name: s.name, owner: s.owner.name, ownerUid: s.owner.uid, contributed: s.contributed });
  for (const s of mine) if (!rows.has(s.id)) rows.set(s.id, { id: s.id, name: s.name, owner: 'you', ownerUid: me, contributed: false });
  const canWrite = role === 'owner' || role === 'editor';
  const act = async (path: string, body: unknown) => {
    setErr(null);
    const r = await postJson(path, body);
    if (!r.ok) setErr(r.message);
  };
  return (
    <div class="spaces" data-testid="spaces">
      <h2>Spaces</h2>
      {rows.size === 0 && <p class="muted small">Run roost bridge on your machine to add your Space.</p>}
      {[...rows.values()].map((s) => (
        <div class="space-row" key={s.id} data-testid={`space-${s.id}`} data-contributed={String(s.contributed)}>
          <span class="rail-label">
            {s.name} <span class="muted small">({s.ownerUid === me ? 'yours' : s.owner})</span>
          </span>
          {s.contributed ? <span class="tag">contributed</span> : <span class="tag">not contributed</span>}
          {!s.contributed && s.ownerUid === me && canWrite && (
            <button class="mini" data-testid={`contribute-${s.id}`} onClick={() => act(`/api/v2/projects/${encodeURIComponent(project)}/spaces`, { space: s.id })}>
              Contribute
            </button>
          )}
          {s.contributed && (s.ownerUid === me || role === 'owner') && (
            <button class="mini" data-testid={`revoke-${s.id}`} onClick={() => act(`/api/v2/projects/${encodeURIComponent(project)}/spaces/${encodeURIComponent(s.id)}/revoke`, {})}>
              Revoke
            </button>
          )}
        </div>
      ))}
      {err && <p class="error">{err}</p>}
    </div>
  );
}
