// A project's outbound webhooks on `/manage` (owners only; docs/webhooks.md):
// its targets (add, remove), and the newest deliveries with their status,
// attempts and last error, each of which can be sent again. The log is read
// again every few seconds while the section is shown (GET /webhooks); the
// server checks every request (src/server/webhooks/routes.ts) and a refusal
// shows its message.

import { useEffect, useState } from 'preact/hooks';
import { getJson, postJson, sendJson } from '../shared/api.js';
import { inProject } from '../shared/scope.js';
import { WEBHOOK_KINDS } from '../../../src/core/webhooks.js';

interface Target {
  id: string;
  url: string;
  kinds: string[];
  slack: boolean;
  allow_private: boolean;
  pending: number;
}
interface Delivery {
  id: string;
  target: string;
  kind: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  enqueued_at: number;
  next_at: number | null;
  last_status: number | null;
  last_error: string;
}

const REFRESH_MS = 5000;
const time = (ms: number) => new Date(ms).toLocaleTimeString();

export function Webhooks(props: { project: string; local: boolean }) {
  const [targets, setTargets] = useState<Target[] | null>(null);
  const [deliveries, setDeliveries] = useState<Delivery[]>([]);
  const [error, setError] = useState('');
  const [url, setUrl] = useState('');
  const [kinds, setKinds] = useState<string[]>(['approval.waiting', 'session.stopped']);
  const [slack, setSlack] = useState(false);
  const [allowPrivate, setAllowPrivate] = useState(false);
  const [secret, setSecret] = useState('');
  const [tick, setTick] = useState(0);
  const path = (p: string) => inProject(p, props.project);

  useEffect(() => {
    let gone = false;
    void getJson<{ targets: Target[]; deliveries: Delivery[] }>(path('/webhooks')).then((r) => {
      if (gone) return;
      if (!r.ok) return setError(r.message);
      setTargets(r.body.targets);
      setDeliveries(r.body.deliveries);
    });
    const t = setTimeout(() => setTick((n) => n + 1), REFRESH_MS);
    return () => {
      gone = true;
      clearTimeout(t);
    };
  }, [props.project, tick]);

  const add = async (e: Event) => {
    e.preventDefault();
    setError('');
    setSecret('');
    const r = await postJson<{ secret: string }>(path('/webhooks'), { url: url.trim(), kinds, slack, ...(allowPrivate ? { allow_private: true } : {}) });
    if (!r.ok) return setError(r.message);
    setSecret(r.body.secret);
    setUrl('');
    setTick((n) => n + 1);
  };
  const act = async (p: Promise<{ ok: boolean; message?: string }>) => {
    setError('');
    const r = await p;
    if (!r.ok) setError(r.message ?? 'refused');
    setTick((n) => n + 1);
  };
  const urlOf = (id: string) => targets?.find((t) => t.id === id)?.url ?? id;

  return (
    <section class="webhooks" aria-labelledby="webhooks-h" data-testid="webhooks">
      <h3 id="webhooks-h">Webhooks</h3>
      <p class="muted">Roost POSTs each chosen event to the URL, signed with the secret (Roost-Signature), and retries for 24 h.</p>
      {targets && targets.length > 0 && (
        <ul class="webhook-targets">
          {targets.map((t) => (
            <li key={t.id} data-testid={`webhook-${t.id}`}>
              <code>{t.url}</code> <span class="role">{t.kinds.join(', ')}{t.slack ? ' · Slack' : ''}{t.allow_private ? ' · private allowed' : ''}{t.pending ? ` · ${t.pending} waiting` : ''}</span>{' '}
              <button type="button" class="link" onClick={() => void act(sendJson('DELETE', path(`/webhooks/${encodeURIComponent(t.id)}`)))} aria-label={`Remove the webhook to ${t.url}`}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={add} data-testid="webhook-add">
        <p>
          <label>
            URL <input type="url" value={url} required maxLength={1000} size={40} placeholder="https://hooks.example.com/roost" onInput={(e) => setUrl((e.target as HTMLInputElement).value)} data-testid="webhook-url" />
          </label>
        </p>
        <fieldset>
          <legend>Events</legend>
          {WEBHOOK_KINDS.map((k) => (
            <label key={k}>
              <input type="checkbox" checked={kinds.includes(k)} onChange={(e) => setKinds((e.target as HTMLInputElement).checked ? [...kinds, k] : kinds.filter((x) => x !== k))} /> {k}{' '}
            </label>
          ))}
        </fieldset>
        <p>
          <label>
            <input type="checkbox" checked={slack} onChange={(e) => setSlack((e.target as HTMLInputElement).checked)} /> Slack-compatible body
          </label>{' '}
          {props.local && (
            <label>
              <input type="checkbox" checked={allowPrivate} onChange={(e) => setAllowPrivate((e.target as HTMLInputElement).checked)} /> Allow a loopback or private address (local mode)
            </label>
          )}
        </p>
        <button type="submit" disabled={!url.trim() || kinds.length === 0} data-testid="webhook-create">
          Add webhook
        </button>
      </form>
      {secret && (
        <p>
          <label>
            Its secret (shown once; verify Roost-Signature with it){' '}
            <input readOnly value={secret} size={48} data-testid="webhook-secret" onFocus={(e) => (e.target as HTMLInputElement).select()} />
          </label>
        </p>
      )}
      {error && (
        <p class="error" role="alert" data-testid="webhook-error">
          {error}
        </p>
      )}
      {deliveries.length > 0 && (
        <table class="members" data-testid="webhook-deliveries">
          <caption class="muted">Newest deliveries</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Event</th>
              <th scope="col">To</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last error</th>
              <th scope="col" aria-label="Actions" />
            </tr>
          </thead>
          <tbody>
            {deliveries.map((d) => (
              <tr key={d.id} data-status={d.status}>
                <td>{time(d.enqueued_at)}</td>
                <td>{d.kind}</td>
                <td>
                  <code>{urlOf(d.target)}</code>
                </td>
                <td>
                  {d.status}
                  {d.status === 'pending' && d.next_at && d.attempts > 0 ? ` (next ${time(d.next_at)})` : ''}
                </td>
                <td>{d.attempts}</td>
                <td>{d.last_error || (d.last_status ? String(d.last_status) : '')}</td>
                <td>
                  {d.status !== 'pending' && (
                    <button type="button" class="link" onClick={() => void act(postJson(path(`/webhooks/deliveries/${encodeURIComponent(d.id)}/resend`), {}))}>
                      Resend
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
