import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { COMPONENTS } from '../../src/features/index.js';
import { migrationsOf } from '../../src/features/root.js';
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
      migrations: migrationsOf(COMPONENTS),
      pgSchema: schemas[0],
    });
    try {
      const second = await openMetadataDb({
        databaseUrl: TEST_DATABASE_URL,
        dataDir: dir,
        migrations: migrationsOf(COMPONENTS),
        pgSchema: schemas[1],
      });
      expect(await second.db.selectFrom('users').select('id').execute()).toEqual([]);
      // What the migrator reads: our schema's tables only, and its own among them when asked.
      const tables = await second.db.introspection.getTables({ withInternalKyselyTables: true });
      expect(new Set(tables.map((t) => t.schema))).toEqual(new Set([schemas[1]]));
      expect(tables.map((t) => t.name)).toContain('kysely_migration');
      expect((await second.db.introspection.getTables()).map((t) => t.name)).not.toContain(
        'kysely_migration',
      );
      const users = tables.find((t) => t.name === 'users')?.columns ?? [];
      expect(users.find((c) => c.name === 'id')).toMatchObject({
        isAutoIncrementing: true,
        isNullable: false,
      });
      expect(users.find((c) => c.name === 'is_admin')).toMatchObject({
        isAutoIncrementing: false,
        hasDefaultValue: true,
      });
      await second.close();
      // Opened again, the migrated schema is found migrated: nothing runs twice.
      const again = await openMetadataDb({
        databaseUrl: TEST_DATABASE_URL,
        dataDir: dir,
        migrations: migrationsOf(COMPONENTS),
        pgSchema: schemas[1],
      });
      expect(await again.db.selectFrom('users').select('id').execute()).toEqual([]);
      await again.close();
    } finally {
      await first.close();
    }
  });
});

/**
 * Kysely's own check for its tables reads every schema's catalog: a schema another client
 * drops meanwhile made start-up fail with "schema … does not exist" (CI saw it when one
 * test file's schema went while another's app started, and again with reads retried).
 */
describe.skipIf(!TEST_DATABASE_URL)('metadata migrations while other schemas come and go', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'logscope-mig-'));
  const ours = [1, 2, 3, 4, 5, 6].map(
    (i) => `migc_${process.pid}_${i}_${Math.random().toString(36).slice(2, 8)}`,
  );
  afterAll(async () => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    for (const s of ours) await client.query(`drop schema if exists ${s} cascade`);
    await client.end();
    rmSync(dir, { recursive: true, force: true });
  });

  it('migrates a fresh schema each time', async () => {
    const churn = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await churn.connect();
    let stop = false;
    let dropped = 0;
    const churning = (async () => {
      for (let i = 0; !stop; i++) {
        const s = `churn_${process.pid}_${i}`;
        await churn.query(
          `create schema ${s}; create table ${s}.t (id serial primary key, a text, b text, c text)`,
        );
        await churn.query(`drop schema ${s} cascade`);
        dropped++;
      }
    })();
    try {
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      for (const s of ours) await admin.query(`create schema ${s}`);
      await admin.end();
      for (const s of ours) {
        const meta = await openMetadataDb({
          databaseUrl: TEST_DATABASE_URL,
          dataDir: dir,
          pgSchema: s,
          migrations: migrationsOf(COMPONENTS),
        });
        expect(await meta.db.selectFrom('users').select('id').execute()).toEqual([]);
        await meta.close();
      }
    } finally {
      stop = true;
      await churning;
      await churn.end();
    }
    expect(dropped).toBeGreaterThan(ours.length);
  });
});
