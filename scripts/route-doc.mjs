#!/usr/bin/env node
// Writes docs/security.md's route table from the route tables (after a build):
//   npm run build && node scripts/route-doc.mjs
// test/routes.http.test.ts fails when the doc and the tables differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { startRoost } from '../dist/src/server/index.js';
import { routeTableMarkdown } from '../dist/src/server/route.js';
import { SqliteStore } from '../dist/src/storage/index.js';

const file = new URL('../docs/security.md', import.meta.url);
const roost = await startRoost(new SqliteStore({ path: ':memory:' }), { port: 0 });
try {
  const doc = readFileSync(file, 'utf8');
  const begin = doc.indexOf('<!-- routes:begin -->');
  const end = doc.indexOf('<!-- routes:end -->');
  if (begin < 0 || end < begin) throw new Error('docs/security.md has no <!-- routes:begin --> ... <!-- routes:end --> markers');
  const table = routeTableMarkdown(roost.routes);
  writeFileSync(file, doc.slice(0, begin) + '<!-- routes:begin -->\n' + table + '\n' + doc.slice(end));
  console.log(`docs/security.md: ${roost.routes.length} routes`);
} finally {
  await roost.close();
}
