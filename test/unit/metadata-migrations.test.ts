import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openMetadataDb } from '../../src/metadata/database.js';
import { TEST_DATABASE_URL } from '../helpers/app.js';

/**
 * Kysely's migrator finds its tables in any schema unless told which: a PostgreSQL
 * database where another schema already holds them (another application, a parallel
 * test) must still get its own.
 */
describe.skipIf(!TEST_DATABASE_URL)('metadata migrations on PostgreSQL', () => {
  const schemas = [1, 2].map((i) => `mig_${process.pid}_${i}_${Math.random().toString(36).slice(2, 8)}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'logscope-mig-'));

  afterAll(async () => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    for (const s of schemas) await client.query(`drop schema if exists ${s} cascade`);
    await client.end();
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrates a fresh schema while another schema has migration tables', async () => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    for (const s of schemas) await client.query(`create schema ${s}`);
    await client.end();
    const first = await openMetadataDb({
      databaseUrl: TEST_DATABASE_URL,
      dataDir: dir,
      pgSchema: schemas[0],
    });
    try {
      const second = await openMetadataDb({
        databaseUrl: TEST_DATABASE_URL,
        dataDir: dir,
        pgSchema: schemas[1],
      });
      const users = await second.db.selectFrom('users').select('id').execute();
      expect(users).toEqual([]);
      await second.close();
    } finally {
      await first.close();
    }
  });
});
