// The thread a member looks at, and a field to open another one (its URL is
// `/fleet/<thread>`, so a thread can be bookmarked and shared).
import { useEffect, useState } from 'preact/hooks';
import { navigate } from '../../shared/navigate.js';
import { isThread } from '../../shared/scope.js';

export function ThreadPicker(props: { thread: string }) {
  const [value, setValue] = useState(props.thread);
  useEffect(() => setValue(props.thread), [props.thread]);
  const ok = isThread(value);
  return (
    <form
      class="thread-pick"
      onSubmit={(e) => {
        e.preventDefault();
        if (ok && value !== props.thread) navigate(`/fleet/${encodeURIComponent(value)}${location.search}`);
      }}
    >
      <label for="thread-input">Thread</label>
      <input id="thread-input" value={value} size={12} maxLength={64} aria-invalid={!ok} onInput={(e) => setValue((e.currentTarget).value.trim())} />
      <button type="submit" disabled={!ok || value === props.thread}>
        Open
      </button>
    </form>
  );
}
