// What an empty view says (issue 33, "First steps from every empty state"):
// the one command that fills it, with a copy button, and a link to the same
// view in the demo project (`npm start -- --demo` fills every app there).
// A view a click fills says the click and shows DemoLink alone.

import { useState } from 'preact/hooks';
import { inProject, projectOfPage } from './scope.js';

export function FirstStep(props: { command: string; testid?: string }) {
  const [copied, setCopied] = useState<'' | 'yes' | 'no'>('');
  const copy = () => {
    const done = (ok: boolean) => setCopied(ok ? 'yes' : 'no');
    // The clipboard needs a secure context (127.0.0.1 and https are): otherwise the person selects it.
    if (navigator.clipboard?.writeText) navigator.clipboard.writeText(props.command).then(() => done(true), () => done(false));
    else done(false);
  };
  return (
    <div class="first-step" data-testid={props.testid ?? 'first-step'}>
      <div class="first-step-row">
        <code class="first-step-command" data-testid="first-step-command">
          {props.command}
        </code>
        <button type="button" class="first-step-copy" onClick={copy} data-testid="first-step-copy" aria-label={`Copy the command: ${props.command}`}>
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
      </div>
      {copied === 'no' && <small class="first-step-note">Copying is not allowed here: select the command instead.</small>}
      <DemoLink />
    </div>
  );
}

/**
 * The line that links an empty view to the same view in the demo project (not
 * shown inside it): with FirstStep's command, or alone under an empty view
 * that a click fills (the flock's lists, a nest).
 */
export function DemoLink() {
  if (projectOfPage() === 'demo') return null;
  return (
    <small class="first-step-demo">
      Or see this view alive first: start Roost with <code>npm start -- --demo</code> and open{' '}
      <a href={inProject(location.pathname, 'demo')} data-testid="first-step-demo">
        the demo project
      </a>
      .
    </small>
  );
}
