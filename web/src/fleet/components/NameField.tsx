import { useEffect, useState } from 'preact/hooks';
import { SESSION_LIMITS } from '../../../../src/core/fleet.js';
import { myName, setMyName, whoAmI, type Me } from '../../shared/me.js';

/**
 * Who this tab posts as. Local mode: a label the person types (the
 * `Roost-Name` header), to tell the owner's tabs apart. Shared mode: the
 * signed-in member, whom the server knows; nothing to type.
 */
export function NameField() {
  const [name, setName] = useState(myName);
  const [me, setMe] = useState<Me | null>(null);
  useEffect(() => {
    let live = true;
    void whoAmI().then((m) => live && setMe(m));
    return () => {
      live = false;
    };
  }, []);
  if (me?.mode === 'shared') {
    return (
      <p class="me" data-testid="signed-in">
        Signed in as <strong>{me.name}</strong>
      </p>
    );
  }
  return (
    <div class="me">
      <label for="me-input">Your name</label>
      <input
        id="me-input"
        data-testid="my-name"
        value={name}
        size={12}
        maxLength={SESSION_LIMITS.by}
        placeholder="local owner"
        onInput={(e) => {
          const v = (e.currentTarget).value;
          setName(v);
          setMyName(v);
        }}
      />
    </div>
  );
}
