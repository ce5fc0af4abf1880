// The storage contract on the embedded SQLite store (a temp file per run).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import { tempDir } from './support/server.js';
import { storageContract } from './storage.contract.js';

const dir = tempDir('roost-sqlite-contract-');
const path = join(dir, 'roost.db');

storageContract(
  'sqlite',
  async () => new SqliteStore({ path }),
  async () => rmSync(dir, { recursive: true, force: true }),
);
