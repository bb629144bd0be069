import type { Kysely, Migration, Selectable } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';

/** A re-mining job's state (docs/api/patterns.md#re-mining): `running` until it ends one of the other ways. */
export type RemineState = 'running' | 'done' | 'failed' | 'stopped';

/**
 * Re-mining jobs, kept in the metadata store so that any node answers for them and a job
 * left running by a process that died is seen as such (its lease ran out).
 */
export interface PatternReminesTable {
  job_id: string;
  state: RemineState;
  /** The range re-mined, Unix ms of event time, [from, to). */
  ts_from: number;
  ts_to: number;
  events_done: number;
  events_total: number;
  /** Events whose `pattern_id` changed. */
  events_changed: number;
  /** ISO 8601 UTC. */
  started: string;
  finished: string | null;
  error: string | null;
  /** The node running it, and until when (epoch ms) it holds it without renewing. */
  owner: string;
  lease_until: number;
  /** 1 once a stop was asked for: the runner stops after its page. */
  stop_requested: number;
  /** Who started it (user id; null for a token without a user). */
  started_by: number | null;
}

export type RemineRow = Selectable<PatternReminesTable>;

declare module '../../metadata/schema.js' {
  interface Database {
    pattern_remines: PatternReminesTable;
  }
}

export const remineMigration = (_dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('pattern_remines')
      .addColumn('job_id', 'text', (c) => c.primaryKey())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('ts_from', 'double precision', (c) => c.notNull())
      .addColumn('ts_to', 'double precision', (c) => c.notNull())
      .addColumn('events_done', 'double precision', (c) => c.notNull().defaultTo(0))
      .addColumn('events_total', 'double precision', (c) => c.notNull().defaultTo(0))
      .addColumn('events_changed', 'double precision', (c) => c.notNull().defaultTo(0))
      .addColumn('started', 'text', (c) => c.notNull())
      .addColumn('finished', 'text')
      .addColumn('error', 'text')
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'double precision', (c) => c.notNull())
      .addColumn('stop_requested', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('started_by', 'integer')
      .execute();
    await db.schema.createIndex('pattern_remines_state').on('pattern_remines').column('state').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('pattern_remines').execute();
  },
});
