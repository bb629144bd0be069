import type { Generated, Kysely, Migration, Selectable } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';
import { idColumn } from '../../metadata/migrations/helpers.js';

/** A backfill's state (docs/api/log-metrics.md "Backfill"). */
export type BackfillStatus = 'RUNNING' | 'DONE' | 'ERROR';

/** Log metrics' backfill jobs: any request may follow one; its counts live beside the events. */
export interface LogMetricJobsTable {
  id: Generated<number>;
  metric_id: number;
  /** The range asked for, rounded outward to the metric's buckets: Unix ms, `[from, to)`. */
  from_ms: number;
  to_ms: number;
  status: BackfillStatus;
  /** 0..1: the share of the range's time not covered before that is done. */
  progress: number;
  events: number;
  started_at: string;
  finished_at: string | null;
  error: string | null;
  started_by: number | null;
}

export type LogMetricJobRow = Selectable<LogMetricJobsTable>;

declare module '../../metadata/schema.js' {
  interface Database {
    log_metric_jobs: LogMetricJobsTable;
  }
}

export const logMetricJobsMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await idColumn(db.schema.createTable('log_metric_jobs'), dialect)
      .addColumn('metric_id', 'integer', (c) => c.notNull().references('log_metrics.id').onDelete('cascade'))
      .addColumn('from_ms', 'double precision', (c) => c.notNull())
      .addColumn('to_ms', 'double precision', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('progress', 'double precision', (c) => c.notNull().defaultTo(0))
      .addColumn('events', 'double precision', (c) => c.notNull().defaultTo(0))
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .addColumn('error', 'text')
      .addColumn('started_by', 'integer')
      .execute();
    await db.schema.createIndex('log_metric_jobs_metric').on('log_metric_jobs').column('metric_id').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('log_metric_jobs').execute();
  },
});
