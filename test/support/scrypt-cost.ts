// Loaded into every test process by scripts/test.mjs (`--import`): password
// hashes at a test cost (N=2^12) instead of production's 2^17, which takes
// about half a second per hash on a small machine and would make the suites
// that create many accounts minutes slower. Only this file calls
// setScryptCostForTests; test/identity.scrypt.test.ts restores production cost
// and checks that nothing under src/ calls it (docs/security.md, "Passwords").
import { setScryptCostForTests } from '../../src/server/identity/secrets.js';

setScryptCostForTests({ N: 1 << 12, r: 8, p: 1 });
