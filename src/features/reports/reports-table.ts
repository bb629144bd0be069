import type { ColumnType, Generated, Insertable, Kysely, Migration, Selectable } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';
import { idColumn } from '../../metadata/migrations/helpers.js';

export interface ReportsTable {
  id: Generated<number>;
  title: string;
  ftype: string;
  status: 'PENDING' | 'READY' | 'ERROR';
  size: number;
  filename: string;
  /** JSON: {kind: 'query', query} or {kind: 'dashboard', dashboard_id}. */
  source: string;
  timezone: string;
  owner_id: number;
  created_at: string;
  error: string | null;
  /** The node generating it while PENDING. */
  owner_node: string | null;
  /** Epoch ms until which `owner_node` holds it; past that another node takes it over. */
  lease_until: Generated<number>;
  /** The schedule whose run made it (0023-report-links); null: made on request. */
  schedule_id: ColumnType<number | null, number | null | undefined, number | null>;
}

/** Keys the server makes once and every node shares (the report links' signing key). */
export interface ServerSecretsTable {
  name: string;
  value: string;
}

/**
 * A report file in pieces, so any node serves it and none holds it whole in memory. Made,
 * with the two lease columns of `reports`, by the store's 0007-cluster migration.
 */
export interface ReportChunksTable {
  report_id: number;
  seq: number;
  data: Uint8Array;
}

declare module '../../metadata/schema.js' {
  interface Database {
    reports: ReportsTable;
    report_chunks: ReportChunksTable;
    server_secrets: ServerSecretsTable;
  }
}

export type ReportRow = Selectable<ReportsTable>;
export type NewReportRow = Insertable<ReportsTable>;

export const reportsMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await idColumn(db.schema.createTable('reports'), dialect)
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('ftype', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('filename', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('timezone', 'text', (c) => c.notNull())
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('error', 'text')
      .execute();
    await db.schema.createIndex('reports_owner').on('reports').column('owner_id').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('reports').execute();
  },
});

/** Reports made by a schedule's run, and the key their links are signed with (docs/api/schedules.md). */
export const reportLinksMigration = (_dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('reports').addColumn('schedule_id', 'integer').execute();
    await db.schema.createIndex('reports_schedule').on('reports').column('schedule_id').execute();
    await db.schema
      .createTable('server_secrets')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('server_secrets').execute();
    await db.schema.dropIndex('reports_schedule').execute();
    await db.schema.alterTable('reports').dropColumn('schedule_id').execute();
  },
});
