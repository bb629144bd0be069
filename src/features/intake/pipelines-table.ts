import {
  type Generated,
  type Insertable,
  type Kysely,
  type Migration,
  type Selectable,
  sql,
  type Updateable,
} from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';
import { idColumn } from '../../metadata/migrations/helpers.js';

export interface PipelinesTable {
  id: Generated<number>;
  /** Set for a built-in pipeline: its definition comes from the code, keyed by this. */
  builtin_key: string | null;
  name: string;
  description: string;
  enabled: number;
  run_order: number;
  /** Query-language string: the events it applies to ('' = all). */
  when_query: string;
  /** JSON array of steps ('[]' for a built-in). */
  steps: string;
  owner_id: number | null;
  created_at: string;
  updated_at: string;
}

declare module '../../metadata/schema.js' {
  interface Database {
    pipelines: PipelinesTable;
  }
}

export type PipelineRow = Selectable<PipelinesTable>;
export type NewPipelineRow = Insertable<PipelinesTable>;
export type PipelineUpdate = Updateable<PipelinesTable>;

/**
 * Ingest pipelines. A built-in pipeline has a row too (`builtin_key` set), written at
 * start when missing, so that it has an id and can be disabled or reordered; its name,
 * description, condition and steps come from the code of the running version, not from
 * the row, so an upgrade improves them.
 */
export const pipelinesMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await idColumn(db.schema.createTable('pipelines'), dialect)
      .addColumn('builtin_key', 'text', (c) => c.unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('run_order', 'integer', (c) => c.notNull().defaultTo(100))
      .addColumn('when_query', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('steps', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('owner_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addCheckConstraint('pipelines_enabled', sql`enabled in (0, 1)`)
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('pipelines').execute();
  },
});
