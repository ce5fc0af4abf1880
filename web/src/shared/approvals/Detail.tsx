// What a held tool call would do, for the person deciding (docs/approvals.md,
// "Decisions with context"): the command and the directory it runs in; a
// file's new content, folded when long; the edits of an Edit or MultiEdit as a
// diff. The detail arrives capped by the server (DETAIL_LIMITS); a cut one
// says so.

import type { ApprovalDetail } from '../../../../src/core/approvals.js';

/** Lines shown before a long text or diff is folded behind "Show all". */
const FOLD_AT = 14;

type Line = { kind: 'ctx' | 'del' | 'add'; text: string };

/**
 * One edit as diff lines. An edit is one replacement (its old text becomes its
 * new text), so its diff is one hunk: the lines both share at the start and
 * the end are context, the rest of the old lines are removed and the rest of
 * the new lines added. Linear in the lines (no general diff needed).
 */
export function editLines(oldText: string, newText: string): Line[] {
  const a = oldText.split('\n');
  const b = newText.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const out: Line[] = [];
  for (let i = 0; i < head; i++) out.push({ kind: 'ctx', text: a[i] });
  for (let i = head; i < a.length - tail; i++) out.push({ kind: 'del', text: a[i] });
  for (let i = head; i < b.length - tail; i++) out.push({ kind: 'add', text: b[i] });
  for (let i = a.length - tail; i < a.length; i++) out.push({ kind: 'ctx', text: a[i] });
  return out;
}

const SIGN = { ctx: ' ', del: '-', add: '+' } as const;

/**
 * Long content: the first lines, and the rest behind a native disclosure
 * (keyboard and screen readers for free). A block taller than its box
 * scrolls, so it takes the keyboard focus (Tab, then the arrows scroll it):
 * axe's scrollable-region-focusable.
 */
function Folded(props: { lines: preact.ComponentChildren[]; count: number; testid: string }) {
  const { lines, count } = props;
  if (count <= FOLD_AT) return <pre class="inbox-detail-pre" tabIndex={0} data-testid={props.testid}>{lines}</pre>;
  return (
    <div data-testid={props.testid}>
      <pre class="inbox-detail-pre" tabIndex={0}>{lines.slice(0, FOLD_AT)}</pre>
      <details class="inbox-fold">
        <summary>Show all {count} lines</summary>
        <pre class="inbox-detail-pre" tabIndex={0}>{lines.slice(FOLD_AT)}</pre>
      </details>
    </div>
  );
}

export function Detail(props: { detail: ApprovalDetail }) {
  const d = props.detail;
  const cut = d.truncated ? <p class="inbox-cut">Cut: the call is longer than Roost shows.</p> : null;
  if (d.kind === 'command') {
    return (
      <div class="inbox-detail" data-testid="detail-command">
        <pre class="inbox-input" data-testid="detail-cmd">$ {d.command}</pre>
        {d.cwd && (
          <p class="inbox-cwd">
            in <code data-testid="detail-cwd">{d.cwd}</code>
          </p>
        )}
        {d.description && <p class="inbox-desc">{d.description}</p>}
        {cut}
      </div>
    );
  }
  if (d.kind === 'write') {
    const lines = d.content.split('\n');
    return (
      <div class="inbox-detail" data-testid="detail-write">
        <p class="inbox-path">
          write <code>{d.path}</code> ({lines.length} {lines.length === 1 ? 'line' : 'lines'})
        </p>
        <Folded lines={lines.map((l, i) => <span key={i} class="inbox-ln">{l}{'\n'}</span>)} count={lines.length} testid="detail-content" />
        {cut}
      </div>
    );
  }
  const all: Line[] = [];
  d.edits.forEach((e, i) => {
    if (i > 0) all.push({ kind: 'ctx', text: '⋯' });
    all.push(...editLines(e.old, e.new));
  });
  const replaceAll = d.edits.some((e) => e.all);
  return (
    <div class="inbox-detail" data-testid="detail-edit">
      <p class="inbox-path">
        edit <code>{d.path}</code>
        {d.edits.length > 1 && <> · {d.edits.length} edits</>}
        {replaceAll && <> · every occurrence</>}
      </p>
      <Folded
        lines={all.map((l, i) => (
          <span key={i} class={`inbox-ln inbox-ln-${l.kind}`} data-line={l.kind}>
            {SIGN[l.kind]} {l.text}
            {'\n'}
          </span>
        ))}
        count={all.length}
        testid="detail-diff"
      />
      {cut}
    </div>
  );
}
