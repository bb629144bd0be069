import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import type { MetadataDialect } from './database.js';
import { initial } from './migrations/0001-initial.js';
import { queries } from './migrations/0002-queries.js';
import { tasks } from './migrations/0003-tasks.js';
import { dashboards } from './migrations/0004-dashboards.js';
import { reports } from './migrations/0005-reports.js';
import { triggers } from './migrations/0006-triggers.js';
import { cluster } from './migrations/0007-cluster.js';
import { pipelines } from './migrations/0008-pipelines.js';
import { alerting } from './migrations/0009-alerting.js';
import { leases } from './migrations/0010-leases.js';
import { signOnUsers } from './migrations/0015-sign-on-users.js';
import { usersDisabled } from './migrations/0018-users-disabled.js';
import { triggerRunAs } from './migrations/0019-trigger-run-as.js';
import type { Database } from './schema.js';

/** A migration; it gets the dialect for the few column types that differ. */
export type MigrationOf = (dialect: MetadataDialect) => Migration;

/** The store's own migrations in order (components declare theirs: `Component.migrations`). */
const MIGRATIONS: Readonly<Record<string, MigrationOf>> = {
  '0001-initial': initial,
  '0002-queries': queries,
  '0003-tasks': tasks,
  '0004-dashboards': dashboards,
  '0005-reports': reports,
  '0006-triggers': triggers,
  '0007-cluster': cluster,
  '0008-pipelines': pipelines,
  '0009-alerting': alerting,
  '0010-leases': leases,
  '0015-sign-on-users': signOnUsers,
  '0018-users-disabled': usersDisabled,
  '0019-trigger-run-as': triggerRunAs,
};

export async function runMigrations(
  db: Kysely<Database>,
  dialect: MetadataDialect,
  more: Readonly<Record<string, MigrationOf>> = {},
): Promise<string[]> {
  const all = { ...MIGRATIONS };
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
  const migrator = new Migrator({
    db,
    ...(schema ? { migrationTableSchema: schema } : {}),
    provider: {
      getMigrations: async () =>
        Object.fromEntries(Object.entries(all).map(([name, make]) => [name, make(dialect)])),
    },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
