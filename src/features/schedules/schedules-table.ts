import type { Generated, Insertable, Kysely, Migration, Selectable, Updateable } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';
import { idColumn } from '../../metadata/migrations/helpers.js';

/** A report schedule (docs/api/schedules.md). */
export interface SchedulesTable {
  id: Generated<number>;
  name: string;
  description: string;
  owner_id: number;
  /** JSON: `{dashboard_id}` or `{saved_search_id}`. */
  source: string;
  format: string;
  /** JSON `{preset}`, or null: the source's own range. */
  time_range: string | null;
  cron: string;
  time_zone: string;
  /** JSON: channel ids. */
  deliver_to: string;
  enabled: number;
  keep_reports: number;
  /** JSON: the last run (`last_run`), or null before the first. */
  last_run: string | null;
  /** Epoch ms of the next slot; null while disabled. */
  next_run_at: number | null;
  /** Cluster: the node running its run, and until when (epoch ms) it holds it; past that another finishes it. */
  run_node: Generated<string | null>;
  run_lease_until: Generated<number>;
  created_at: string;
  updated_at: string;
}

/**
 * A slot's run, claimed before it starts: the key (schedule, slot) is unique, so of two
 * nodes (or a node before and after a lease hand-over) only one runs a slot.
 */
export interface ScheduleRunsTable {
  schedule_id: number;
  /** Epoch ms of the slot. */
  slot_at: number;
  node: string;
  claimed_at: string;
}

declare module '../../metadata/schema.js' {
  interface Database {
    schedules: SchedulesTable;
    schedule_runs: ScheduleRunsTable;
  }
}

export type ScheduleRow = Selectable<SchedulesTable>;
export type NewScheduleRow = Insertable<SchedulesTable>;
export type ScheduleUpdate = Updateable<SchedulesTable>;

export const schedulesMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await idColumn(db.schema.createTable('schedules'), dialect)
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('format', 'text', (c) => c.notNull())
      .addColumn('time_range', 'text')
      .addColumn('cron', 'text', (c) => c.notNull())
      .addColumn('time_zone', 'text', (c) => c.notNull())
      .addColumn('deliver_to', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('keep_reports', 'integer', (c) => c.notNull().defaultTo(10))
      .addColumn('last_run', 'text')
      .addColumn('next_run_at', 'double precision')
      .addColumn('run_node', 'text')
      .addColumn('run_lease_until', 'double precision', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('schedules_owner').on('schedules').column('owner_id').execute();
    await db.schema.createIndex('schedules_next_run').on('schedules').column('next_run_at').execute();
    await db.schema
      .createTable('schedule_runs')
      .addColumn('schedule_id', 'integer', (c) => c.notNull().references('schedules.id').onDelete('cascade'))
      .addColumn('slot_at', 'double precision', (c) => c.notNull())
      .addColumn('node', 'text', (c) => c.notNull())
      .addColumn('claimed_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('schedule_runs_pk', ['schedule_id', 'slot_at'])
      .execute();
    // A scheduled report's deliveries name their schedule and report (GET /api/deliveries?schedule_id=).
    await db.schema.alterTable('deliveries').addColumn('schedule_id', 'integer').execute();
    await db.schema.alterTable('deliveries').addColumn('report_id', 'integer').execute();
    await db.schema.createIndex('deliveries_schedule').on('deliveries').column('schedule_id').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('deliveries_schedule').execute();
    await db.schema.alterTable('deliveries').dropColumn('report_id').execute();
    await db.schema.alterTable('deliveries').dropColumn('schedule_id').execute();
    await db.schema.dropTable('schedule_runs').execute();
    await db.schema.dropTable('schedules').execute();
  },
});
