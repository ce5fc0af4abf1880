// One list moving through the flock: its budget, and each item's phase,
// triage, crows, answer and the verdict that waits for a person; the banter
// lines under the item they were spoken about (`crow.banter`), and the prank
// on the list it reached (`requester.pranked`).
// A verdict goes through `POST /api/verdicts` (the shared path: the same
// decision as the inbox's, first decision wins); a 404 or 409 means somebody
// (or the window) decided first, shown as "already decided".
import { useState } from 'preact/hooks';
import type { FlockItem, FlockList, ItemPhase, ItemStatus, ListStatus, VerdictTarget } from '../../../../src/core/flock.js';
import { postJson } from '../../shared/api.js';
import { nameHeaders } from '../../shared/me.js';
import { inProject } from '../../shared/scope.js';
import { Crows } from './Crows.js';

const PHASE: Record<ItemPhase, string> = {
  triage: 'waiting for the Sentry',
  triaging: 'the Sentry is looking',
  triage_verdict: 'triage waits for a verdict',
  rejected: 'triage rejected',
  work: 'waiting for crows',
  flying: 'crows flying',
  merge: 'waiting for the Elder',
  merging: 'the Elder is merging',
  answer: 'answering',
  output_verdict: 'answer waits for a verdict',
  done: 'done',
  skipped: 'skipped',
  failed: 'failed',
};

const k = (n: number) => (n >= 10_000 ? `${Math.round(n / 1000)}k` : n.toLocaleString('en-US'));

/** `raw`: the fold's list (who decided each verdict); `found`: an item a search hit opened, marked. */
export function ListCard(props: { list: ListStatus; raw?: FlockList; found?: string | null }) {
  const l = props.list;
  const pct = l.token_budget > 0 ? Math.min(100, (l.tokens_used / l.token_budget) * 100) : 0;
  const done = l.items.filter((i) => i.phase === 'done' || i.phase === 'skipped').length;
  return (
    <article class="fl-list" data-testid={`flock-list-${l.list_id}`} data-finished={l.finished ? 'yes' : 'no'}>
      <header class="fl-list-head">
        <h3>
          {l.list_id}{' '}
          <span class="fl-muted" data-testid={`flock-from-${l.list_id}`}>
            from {l.requester} · in {l.nest_id}
          </span>
        </h3>
        <span class="fl-muted">
          {done}/{l.items.length} closed{l.finished ? ' · finished' : ''}
          {l.pranks ? ` · pranked ${l.pranks}×` : ''}
        </span>
        <div class="fl-budget" data-testid={`flock-budget-${l.list_id}`} title={`${l.tokens_used} of ${l.token_budget} tokens`}>
          <span class="fl-budget-bar" aria-hidden="true">
            <span style={{ width: `${pct}%` }} />
          </span>
          {k(l.tokens_used)} / {k(l.token_budget)} tokens
        </div>
      </header>
      {props.raw?.prank && (
        <p class="fl-prank" role="status" data-testid={`flock-prank-${l.list_id}`}>
          <strong>Pranked.</strong> {props.raw.prank.message} <span class="fl-muted">(cooldown {props.raw.prank.cooldown_s} s)</span>
        </p>
      )}
      <ol class="fl-items">
        {l.items.map((it, i) => (
          <Item key={it.item_id} item={it} raw={props.raw?.items[i]} banter={(props.raw?.said ?? []).filter((b) => b.item_id === it.item_id)} found={props.found === it.item_id} />
        ))}
      </ol>
    </article>
  );
}

const byOf = (v: FlockItem['triageVerdict'] | undefined) => (v?.by ? ` by ${v.by}` : '');

function Item(props: { item: ItemStatus; raw?: FlockItem; banter: NonNullable<FlockList['said']>; found?: boolean }) {
  const it = props.item;
  // Kept here, not in the verdict box: the box goes when the verdict arrives, the note stays.
  const [note, setNote] = useState('');
  const t = it.triage;
  // A verdict waits for a person only where the service asked for one (else it writes `auto`).
  const waits: VerdictTarget | null = it.phase === 'triage_verdict' && t?.needs_approval ? 'triage' : it.phase === 'output_verdict' && it.answer !== null ? 'output' : null;
  return (
    <li
      class={`fl-item fl-phase-${it.phase}${props.found ? ' fl-found' : ''}`}
      data-testid={`flock-item-${it.item_id}`}
      data-phase={it.phase}
      {...(props.found ? { tabIndex: -1, 'aria-current': 'true' as const } : {})}
    >
      <div class="fl-item-head">
        <span class="fl-text">{it.text}</span>
        <span class="fl-phase" data-testid={`flock-phase-${it.item_id}`}>
          {PHASE[it.phase]}
          {it.skipped ? ` (${it.skipped})` : ''}
        </span>
      </div>
      {t && (
        <p class="fl-triage fl-muted">
          {t.mode} · {t.task_type}
          {t.subtasks.length ? ` · ${t.subtasks.length} subtasks` : ''}: {t.reason}
          {it.triage_verdict ? ` · triage ${it.triage_verdict}${byOf(props.raw?.triageVerdict)}` : ''}
        </p>
      )}
      <Crows item={it} />
      {it.answer !== null && (
        <div class="fl-answer" data-testid={`flock-answer-${it.item_id}`}>
          <span class="fl-muted">
            Answer{it.crows.length ? ` by ${it.crows.join(', ')}` : ''}
            {it.output_verdict ? ` · ${it.output_verdict}${byOf(props.raw?.outputVerdict)}` : ''}
          </span>
          <pre>{it.answer}</pre>
        </div>
      )}
      {props.banter.map((b, i) => (
        <p key={i} class="fl-banter" data-testid={`flock-banter-${it.item_id}`}>
          <span class="fl-muted">
            {b.crow} to {b.to}:
          </span>{' '}
          <q>{b.text}</q>
        </p>
      ))}
      {waits && <Verdict item={it} target={waits} onNote={setNote} />}
      {note && (
        <p class="fl-note" role="status" data-testid={`flock-verdict-note-${it.item_id}`}>
          {note}
        </p>
      )}
    </li>
  );
}

function Verdict(props: { item: ItemStatus; target: VerdictTarget; onNote: (s: string) => void }) {
  const { item, target } = props;
  const [busy, setBusy] = useState(false);
  const decide = async (approve: boolean) => {
    setBusy(true);
    props.onNote('');
    const r = await postJson(inProject('/api/verdicts'), { item_id: item.item_id, target, approve }, nameHeaders());
    setBusy(false);
    // On success the verdict arrives on the stream and this box goes away.
    if (!r.ok) props.onNote(r.status === 404 || r.status === 409 ? `Already decided: the ${target} verdict was given elsewhere (the inbox, another person) or its window closed.` : r.message);
  };
  return (
    <div class="fl-verdict" data-testid={`flock-verdict-${item.item_id}-${target}`} role="group" aria-label={`${target} verdict`}>
      <span>{target === 'triage' ? 'Fly it like this?' : 'Accept this answer?'}</span>
      <button type="button" class="fl-approve" disabled={busy} onClick={() => void decide(true)}>
        Approve {target}
      </button>
      <button type="button" class="fl-reject" disabled={busy} onClick={() => void decide(false)}>
        Reject
      </button>
    </div>
  );
}
