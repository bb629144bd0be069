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
 * PostgreSQL metadata at an upgrade (docs/operations/upgrade.md): the server cannot back up
 * another machine's database, so a store holding data with migrations pending is refused
 * until the operator says they took a pg_dump; a new, empty one is set up without asking.
 */
describe.runIf(TEST_DATABASE_URL)('PostgreSQL metadata with migrations pending', () => {
  const schemas: string[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'logscope-pg-upgrade-'));
  const sqlOn = async (statement: string) => {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      return (await client.query(statement)).rows;
    } finally {
      await client.end();
    }
  };
  const schema = async () => {
    const s = `pgup_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await sqlOn(`create schema ${s}`);
    schemas.push(s);
    return s;
  };
  const all = migrationsOf(COMPONENTS);
  const names = Object.keys(all).sort();
  const newest = names[names.length - 1] as string;
  /** The store as the release before the newest migration left it. */
  const older = Object.fromEntries(Object.entries(all).filter(([name]) => name !== newest));
  const open = (pgSchema: string, migrations = all, postgresUpgrade: 'refuse' | 'allow' = 'refuse') =>
    openMetadataDb({ databaseUrl: TEST_DATABASE_URL, dataDir: dir, migrations, pgSchema, postgresUpgrade });
  afterAll(async () => {
    for (const s of schemas) await sqlOn(`drop schema ${s} cascade`);
    rmSync(dir, { recursive: true, force: true });
  });

  it('sets up a new, empty database without asking', async () => {
    const s = await schema();
    await (await open(s)).close();
    expect(await sqlOn(`select name from ${s}.kysely_migration where name = '${newest}'`)).toHaveLength(1);
  });

  it('refuses a store holding data until it is backed up, changing nothing', async () => {
    const s = await schema();
    await (await open(s, older)).close();
    await sqlOn(
      `insert into ${s}.users (username, password_hash, is_admin, permissions, created_at) values ('ann', '', 1, '[]', now()::text)`,
    );
    await expect(open(s)).rejects.toThrow(
      new RegExp(
        `holds data and this release has 1 migration to run on it \\(${newest}\\): take a backup with pg_dump, then run "logscope migrate --backed-up"`,
      ),
    );
    expect(await sqlOn(`select name from ${s}.kysely_migration where name = '${newest}'`)).toHaveLength(0);
    await (await open(s, all, 'allow')).close();
    expect(await sqlOn(`select name from ${s}.kysely_migration where name = '${newest}'`)).toHaveLength(1);
    // Once migrated, a start has nothing to ask.
    await (await open(s)).close();
  });
});
