import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import type { MetadataDialect } from './database.js';
import { cluster } from './migrations/0007-cluster.js';
import { leases } from './migrations/0010-leases.js';
import type { Database } from './schema.js';

/** A migration; it gets the dialect for the few column types that differ. */
export type MigrationOf = (dialect: MetadataDialect) => Migration;

/**
 * The store's own migrations: the cluster's tables. They are no schema alone: every other
 * table is a feature's, made by the migrations its component declares
 * (`Component.migrations`), and 0007-cluster refers to two of those (`queries`, `reports`;
 * it stays whole, as databases ran it). So every caller passes the components' migrations
 * (`migrationsOf(COMPONENTS)`), run with these in name order.
 */
export const STORE_MIGRATIONS: Readonly<Record<string, MigrationOf>> = {
  '0007-cluster': cluster,
  '0010-leases': leases,
};

/** Kysely's migrator over the store's and the components' migrations, in our schema. */
async function migratorOf(
  db: Kysely<Database>,
  dialect: MetadataDialect,
  more: Readonly<Record<string, MigrationOf>>,
): Promise<Migrator> {
  const all = { ...STORE_MIGRATIONS };
  for (const [name, make] of Object.entries(more)) {
    if (all[name]) throw new Error(`migration ${name} is declared twice`);
    all[name] = make;
  }
  // Kysely's migration tables are made in our schema, named through its schema plugin, and
  // looked for there only (postgres-introspector.ts): otherwise another schema's (another
  // application's, a parallel test's) would pass for ours.
  const schema =
    dialect === 'postgres'
      ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s
      : undefined;
  return new Migrator({
    db,
    ...(schema ? { migrationTableSchema: schema } : {}),
    provider: {
      getMigrations: async () =>
        Object.fromEntries(Object.entries(all).map(([name, make]) => [name, make(dialect)])),
    },
  });
}

export async function runMigrations(
  db: Kysely<Database>,
  dialect: MetadataDialect,
  more: Readonly<Record<string, MigrationOf>>,
): Promise<string[]> {
  const migrator = await migratorOf(db, dialect, more);
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** The migrations not run yet on this store, in name order. */
export async function pendingMigrations(
  db: Kysely<Database>,
  dialect: MetadataDialect,
  more: Readonly<Record<string, MigrationOf>>,
): Promise<string[]> {
  const migrator = await migratorOf(db, dialect, more);
  return (await migrator.getMigrations()).filter((m) => !m.executedAt).map((m) => m.name);
}
