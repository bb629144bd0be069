import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Kysely, SqliteDialect } from 'kysely';
import { type MigrationOf, runMigrations } from './migrator.js';
import { OwnSchemaPostgresDialect } from './postgres-introspector.js';
import type { Database } from './schema.js';
import { openSqliteDatabase, type SqliteDriverName } from './sqlite-driver.js';

export type MetadataDialect = 'sqlite' | 'postgres';

export interface MetadataDb {
  readonly db: Kysely<Database>;
  readonly dialect: MetadataDialect;
  /** The SQLite library in use (SQLite only). */
  readonly sqliteDriver?: SqliteDriverName;
  close(): Promise<void>;
}

export interface MetadataDbOptions {
  /** Empty: SQLite at `<dataDir>/meta.sqlite`. Otherwise a postgres:// URL. */
  databaseUrl: string;
  dataDir: string;
  /** PostgreSQL schema to use (tests isolate themselves with one each). */
  pgSchema?: string;
  /**
   * The components' migrations (`migrationsOf(COMPONENTS)`), run in name order with the
   * store's own: those alone make no usable schema (migrator.ts).
   */
  migrations: Readonly<Record<string, MigrationOf>>;
}

/** Opens the metadata store chosen by config and brings its schema up to date. */
export async function openMetadataDb(options: MetadataDbOptions): Promise<MetadataDb> {
  const meta = options.databaseUrl
    ? await openPostgres(options.databaseUrl, options.pgSchema)
    : await openSqlite(options.dataDir);
  try {
    await runMigrations(meta.db, meta.dialect, options.migrations);
  } catch (err) {
    await meta.close();
    throw err;
  }
  return meta;
}

/**
 * SQLite at `<dataDir>/meta.sqlite`, through node:sqlite on Node 24+ and libsql before
 * (see sqlite-driver.ts); `sqliteDriver` says which.
 */
async function openSqlite(dataDir: string): Promise<MetadataDb> {
  mkdirSync(dataDir, { recursive: true });
  const sqlite = await openSqliteDatabase(path.join(dataDir, 'meta.sqlite'));
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite.database }) });
  return { db, dialect: 'sqlite', sqliteDriver: sqlite.driver, close: () => db.destroy() };
}

async function openPostgres(url: string, schema: string | undefined): Promise<MetadataDb> {
  // Loaded only here: a SQLite start does not pay for the driver.
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    // An address that swallows packets answers nothing: give up on a connection after 10 s.
    connectionTimeoutMillis: 10_000,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // A connection the server drops (restart, failover, network) must not crash the
  // process: pg emits 'error' on the client, idle (the pool's event) or checked out (the
  // client's own, which nothing else listens to). The pool discards such a client, and a
  // request meanwhile gets 503 store_unavailable.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new OwnSchemaPostgresDialect({ pool }) });
  return { db, dialect: 'postgres', close: () => db.destroy() };
}
