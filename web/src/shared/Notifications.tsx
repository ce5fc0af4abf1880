// "Notifications" on the approvals page: this device's push notifications
// for the page's project (on or off), what reaches the member there (their
// choice, kept by the server per project), and the sound (this browser only,
// off unless turned on).

import { useEffect, useState } from 'preact/hooks';
import { disablePush, enablePush, pushInfo, pushSupported, savePrefs, setSound, soundOn, type NoticeKind, type PushInfo, type QuietHours } from './push.js';
import { projectOfPage } from './scope.js';

const KINDS: { kind: NoticeKind; label: string }[] = [
  { kind: 'approval', label: 'An approval waits' },
  { kind: 'ask', label: 'An ask_owner question waits' },
  { kind: 'failed', label: 'An agent failed' },
  { kind: 'finished', label: 'A flock list finished' },
  { kind: 'done', label: 'An agent or a Work command is done' },
  { kind: 'budget', label: 'The budget crossed 80% or 100%' },
];

/** The browser's own time zone: what quiet hours start from. */
const ownZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/**
 * This browser's own subscription among the member's: the server names a
 * subscription `ps_` + sha256(project, endpoint) (src/server/push/service.ts
 * subscriptionId), so the page finds its own without the server saying which
 * endpoint is whose.
 */
async function thisDevice(info: PushInfo, project: string): Promise<string | null> {
  if (!pushSupported()) return null;
  const reg = await navigator.serviceWorker.getRegistration('/');
  const sub = await reg?.pushManager.getSubscription().catch(() => null);
  if (!sub) return null;
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(`${project}\n${new URL(sub.endpoint).href}`));
  const id = 'ps_' + Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('').slice(0, 24);
  return info.subscriptions.some((s) => s.id === id) ? id : null;
}

export function Notifications() {
  const project = projectOfPage() || undefined;
  const [info, setInfo] = useState<PushInfo | null>(null);
  const [device, setDevice] = useState<string | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const [sound, setSoundState] = useState(soundOn());
  const load = async () => {
    const r = await pushInfo(project);
    if (!r.ok) return setError(r.message);
    setInfo(r.body);
    setDevice(await thisDevice(r.body, project ?? 'default'));
  };
  useEffect(() => void load(), [project]);
  const turn = async (on: boolean) => {
    if (!info) return;
    setBusy(true);
    setError('');
    const why = on ? await enablePush(info.publicKey, project) : device ? await disablePush(device, project) : null;
    if (why) setError(why);
    await load();
    setBusy(false);
  };
  const choose = async (kind: NoticeKind, on: boolean) => {
    const r = await savePrefs({ [kind]: on }, project);
    if (r.ok) setInfo((i) => (i ? { ...i, prefs: r.body.prefs } : i));
    else setError(r.message);
  };
  const quiet = async (q: QuietHours | null) => {
    setError('');
    const r = await savePrefs({ quiet: q }, project);
    if (r.ok) setInfo((i) => (i ? { ...i, quiet: r.body.quiet } : i));
    else setError(r.message);
  };
  const q = info?.quiet ?? null;
  return (
    <section class="notify" aria-labelledby="notify-h" data-testid="notifications">
      <h2 id="notify-h">Notifications</h2>
      {!pushSupported() ? (
        <p class="notify-note">This browser cannot show Roost’s notifications. Install Roost as an app (the browser’s “Install” or “Add to Home Screen”) where it can.</p>
      ) : (
        <p class="notify-state">
          <span data-testid="notify-state">{device ? 'On for this device' : 'Off for this device'}</span>{' '}
          <button type="button" disabled={busy || !info} onClick={() => void turn(!device)} data-testid="notify-toggle">
            {device ? 'Turn off' : 'Turn on'}
          </button>
        </p>
      )}
      {info && (
        <fieldset class="notify-kinds">
          <legend>What reaches you in this project</legend>
          {KINDS.map(({ kind, label }) => (
            <label key={kind}>
              <input type="checkbox" checked={info.prefs[kind]} onChange={(e) => void choose(kind, (e.target as HTMLInputElement).checked)} data-testid={`notify-${kind}`} /> {label}
            </label>
          ))}
        </fieldset>
      )}
      {info && (
        <fieldset class="notify-quiet" data-testid="notify-quiet">
          <legend>Quiet hours (every project)</legend>
          <label>
            <input type="checkbox" checked={q !== null} onChange={(e) => void quiet((e.target as HTMLInputElement).checked ? { timeZone: ownZone(), start: '22:00', end: '07:00', letWaiting: true } : null)} data-testid="notify-quiet-on" /> Nothing from
          </label>{' '}
          <input type="time" aria-label="Quiet from" disabled={!q} value={q?.start ?? '22:00'} onChange={(e) => q && void quiet({ ...q, start: (e.target as HTMLInputElement).value })} data-testid="notify-quiet-start" /> to{' '}
          <input type="time" aria-label="Quiet until" disabled={!q} value={q?.end ?? '07:00'} onChange={(e) => q && void quiet({ ...q, end: (e.target as HTMLInputElement).value })} data-testid="notify-quiet-end" />{' '}
          <span class="notify-note">({q?.timeZone ?? ownZone()})</span>
          <label>
            <input type="checkbox" disabled={!q} checked={q?.letWaiting ?? true} onChange={(e) => q && void quiet({ ...q, letWaiting: (e.target as HTMLInputElement).checked })} data-testid="notify-quiet-waiting" /> but let through what waits for me (approvals, questions)
          </label>
        </fieldset>
      )}
      <label class="notify-sound">
        <input
          type="checkbox"
          checked={sound}
          onChange={(e) => {
            const on = (e.target as HTMLInputElement).checked;
            setSound(on);
            setSoundState(on);
          }}
          data-testid="notify-sound"
        />{' '}
        Play a sound in this tab when a decision starts to wait
      </label>
      {error && (
        <p class="notify-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
