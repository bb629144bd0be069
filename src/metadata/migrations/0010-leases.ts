import type { Kysely, Migration } from 'kysely';
import type { MetadataDialect } from '../database.js';

/**
 * Named leases: work that one node of a cluster does for all (today the alert notifier,
 * which evaluates the cluster's shared threshold counts and sends their notifications).
 */
export const leases = (_dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('leases')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'double precision', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('leases').execute();
  },
});
