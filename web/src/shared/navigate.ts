// Client-side navigation: the server answers every app route with
// index.html, and the shell (main.tsx) re-renders on `popstate`.

/** Goes to `path` (with its query) without reloading the page; `replace`: in place of the current entry of the history. */
export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

/**
 * A link's click handler: navigates in the page, except for a click that
 * asks for a new tab or window (Ctrl, Cmd, Shift), left to the browser.
 */
export function followLink(path: string): (e: MouseEvent) => void {
  return (e) => {
    if (e.metaKey || e.ctrlKey || e.shiftKey) return;
    e.preventDefault();
    navigate(path);
  };
}
