#!/usr/bin/env node
// Entry point of the `roost` command; the code lives in dist/ (npm run build).
import { main } from '../dist/src/cli/main.js';

main(process.argv.slice(2)).catch((err) => {
  console.error(`roost: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
});
