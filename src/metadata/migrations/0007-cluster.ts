import type { Kysely, Migration } from 'kysely';
import type { MetadataDialect } from '../database.js';

/**
 * What makes every node of a cluster interchangeable: the state of query jobs with the
 * lease of the node computing each, the lease of the node generating a report, and report
 * files kept in the metadata store (in chunks) so that any node serves them.
 */
export const cluster = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('query_jobs')
      .addColumn('query_id', 'text', (c) => c.primaryKey().references('queries.query_id').onDelete('cascade'))
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'double precision', (c) => c.notNull())
      .addColumn('stop_requested', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('state', 'text')
      .addColumn('results', 'text')
      .execute();
    await db.schema
      .createIndex('query_jobs_status')
      .on('query_jobs')
      .columns(['status', 'lease_until'])
      .execute();
    await db.schema.alterTable('reports').addColumn('owner_node', 'text').execute();
    await db.schema
      .alterTable('reports')
      .addColumn('lease_until', 'double precision', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('report_chunks')
      .addColumn('report_id', 'integer', (c) => c.notNull().references('reports.id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('data', dialect === 'postgres' ? 'bytea' : 'blob', (c) => c.notNull())
      .addPrimaryKeyConstraint('report_chunks_pk', ['report_id', 'seq'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('report_chunks').execute();
    await db.schema.alterTable('reports').dropColumn('lease_until').execute();
    await db.schema.alterTable('reports').dropColumn('owner_node').execute();
    await db.schema.dropTable('query_jobs').execute();
  },
});
