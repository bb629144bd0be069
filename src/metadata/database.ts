import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { StartupError } from '../errors/startup.js';
import { type MigrationOf, pendingMigrations, runMigrations } from './migrator.js';
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
  /**
   * PostgreSQL holding data (any user) with migrations pending: `refuse` stops the start
   * with one line (the server cannot back up another machine's database first,
   * docs/operations/upgrade.md); `allow` migrates (an operator took a `pg_dump`). A new,
   * empty database is set up either way.
   */
  postgresUpgrade?: 'refuse' | 'allow';
}

/** Opens the metadata store chosen by config and brings its schema up to date. */
export async function openMetadataDb(options: MetadataDbOptions): Promise<MetadataDb> {
  const meta = options.databaseUrl
    ? await openPostgres(options.databaseUrl, options.pgSchema)
    : await openSqlite(options.dataDir);
  try {
    if (meta.dialect === 'postgres' && options.postgresUpgrade === 'refuse')
      await refuseUnbackedUpgrade(meta, options);
    await runMigrations(meta.db, meta.dialect, options.migrations);
  } catch (err) {
    await meta.close();
    throw err;
  }
  return meta;
}

/** A PostgreSQL store with data and pending migrations: the start refused (see `postgresUpgrade`). */
async function refuseUnbackedUpgrade(meta: MetadataDb, options: MetadataDbOptions): Promise<void> {
  const pending = await pendingMigrations(meta.db, meta.dialect, options.migrations);
  if (!pending.length) return;
  const users = await sql<{ t: string | null }>`select to_regclass('users')::text as t`.execute(meta.db);
  if (!users.rows[0]?.t) return;
  const held = await sql<{ n: number }>`select count(*)::int as n from users`.execute(meta.db);
  if (!held.rows[0]?.n) return;
  throw new StartupError(
    `Cannot start: the PostgreSQL metadata store holds data and this release has ${pending.length} migration${pending.length === 1 ? '' : 's'} to run on it (${pending.join(', ')}): take a backup with pg_dump, then run "logscope migrate --backed-up" (or set upgradeBackup off), as docs/operations/upgrade.md says.`,
  );
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
