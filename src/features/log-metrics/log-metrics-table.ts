import type { Generated, Kysely, Migration } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';
import { idColumn } from '../../metadata/migrations/helpers.js';

/** A log metric's definition (docs/api/log-metrics.md); its buckets live beside the events. */
export interface LogMetricsTable {
  id: Generated<number>;
  name: string;
  description: string;
  query: string;
  kind: string;
  field: string | null;
  /** JSON texts. */
  quantiles: string | null;
  labels: string;
  resolution_seconds: number;
  retention_days: number;
  max_series: number;
  owner: number;
  share_everyone: number;
  counting_since: string;
  /** JSON: `[{from, to}]`, Unix seconds. */
  backfilled: string;
  created_at: string;
  updated_at: string;
}

/** A team a log metric is shared with. */
export interface LogMetricTeamsTable {
  log_metric_id: number;
  team_id: number;
}

declare module '../../metadata/schema.js' {
  interface Database {
    log_metrics: LogMetricsTable;
    log_metric_teams: LogMetricTeamsTable;
  }
}

export const logMetricsMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await idColumn(db.schema.createTable('log_metrics'), dialect)
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('query', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('field', 'text')
      .addColumn('quantiles', 'text')
      .addColumn('labels', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('resolution_seconds', 'integer', (c) => c.notNull())
      .addColumn('retention_days', 'integer', (c) => c.notNull())
      .addColumn('max_series', 'integer', (c) => c.notNull())
      .addColumn('owner', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('share_everyone', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('counting_since', 'text', (c) => c.notNull())
      .addColumn('backfilled', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('log_metrics_owner').on('log_metrics').column('owner').execute();
    await db.schema
      .createTable('log_metric_teams')
      .addColumn('log_metric_id', 'integer', (c) =>
        c.notNull().references('log_metrics.id').onDelete('cascade'),
      )
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id').onDelete('cascade'))
      .execute();
    await db.schema
      .createIndex('log_metric_teams_metric')
      .on('log_metric_teams')
      .column('log_metric_id')
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('log_metric_teams').execute();
    await db.schema.dropTable('log_metrics').execute();
  },
});
