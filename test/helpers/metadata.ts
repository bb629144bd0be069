import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { COMPONENTS } from '../../src/features/index.js';
import { migrationsOf } from '../../src/features/root.js';
import { type MetadataDb, openMetadataDb } from '../../src/metadata/database.js';
import { TEST_DATABASE_URL } from './app.js';

/** The metadata stores a test runs on: SQLite always, PostgreSQL when the suite has a URL. */
export const METADATA_BACKENDS = [
  { name: 'SQLite', url: '' },
  ...(TEST_DATABASE_URL ? [{ name: 'PostgreSQL', url: TEST_DATABASE_URL }] : []),
];

/**
 * A metadata store of its own, opened alone (no app) with every migration: SQLite in a temp
 * dir, or a PostgreSQL schema made for it. `dispose` closes it and removes both.
 */
export async function freshMetadata(
  url: string,
  prefix: string,
): Promise<{ meta: MetadataDb; dispose(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), `logscope-${prefix}-`));
  const schema = `${prefix.replace(/-/g, '_')}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const onPostgres = async (statement: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(statement);
    await client.end();
  };
  if (url) await onPostgres(`create schema ${schema}`);
  const meta = await openMetadataDb({
    databaseUrl: url,
    dataDir: dir,
    migrations: migrationsOf(COMPONENTS),
    ...(url ? { pgSchema: schema } : {}),
  });
  return {
    meta,
    async dispose() {
      await meta.close();
      rmSync(dir, { recursive: true, force: true });
      if (url) await onPostgres(`drop schema if exists ${schema} cascade`);
    },
  };
}
