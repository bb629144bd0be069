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
import type { TaskPriority } from '../tasks/tasks-service.js';

export interface TriggersTable {
  id: Generated<number>;
  name: string;
  description: string;
  severity: TaskPriority;
  /** Query-language string, AND-ed with `filter`. */
  query: string;
  /** JSON array of filter conditions. */
  filter: string;
  enabled: number;
  create_task: number;
  assign_to: number | null;
  owner_id: number;
  created_at: string;
  updated_at: string;
  /** JSON: {"type": "match"} or a threshold condition. */
  condition: Generated<string>;
  /** JSON array of channel ids. */
  notify: Generated<string>;
  cooldown_seconds: Generated<number>;
  /**
   * The user whose rights it runs with: who last decided what it matches or where it
   * sends (null once that user is deleted: it matches nothing).
   */
  run_as: number | null;
}

export interface TriggerMatchesTable {
  trigger_id: number;
  ev_id: string;
  matched_at: string;
  task_id: number | null;
}

declare module '../../metadata/schema.js' {
  interface Database {
    triggers: TriggersTable;
    trigger_matches: TriggerMatchesTable;
  }
}

export type TriggerRow = Selectable<TriggersTable>;
export type NewTriggerRow = Insertable<TriggersTable>;
export type TriggerUpdate = Updateable<TriggersTable>;
export type NewTriggerMatchRow = Insertable<TriggerMatchesTable>;

/**
 * Triggers and their matches. A match row is what
 * `GET /api/events/{ev_id}/triggers` lists; it goes with its trigger. The tasks a trigger
 * opened stay when it is deleted (the repository clears their `trigger_id`), as a closed
 * alert in Graylog keeps its history.
 */
export const triggersMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await idColumn(db.schema.createTable('triggers'), dialect)
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('severity', 'text', (c) => c.notNull().defaultTo('medium'))
      .addColumn('query', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('filter', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('create_task', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('assign_to', 'integer', (c) => c.references('users.id').onDelete('set null'))
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addCheckConstraint('triggers_severity', sql`severity in ('low', 'medium', 'high', 'critical')`)
      .addCheckConstraint('triggers_enabled', sql`enabled in (0, 1)`)
      .addCheckConstraint('triggers_create_task', sql`create_task in (0, 1)`)
      .execute();
    await db.schema.createIndex('triggers_owner').on('triggers').column('owner_id').execute();

    // One B-tree keyed by event (WITHOUT ROWID on SQLite): a match row is written for every
    // matching event on the ingest path, so no second index is kept; deleting a trigger's
    // matches scans, which is rare.
    let matches = db.schema
      .createTable('trigger_matches')
      .addColumn('ev_id', 'text', (c) => c.notNull())
      .addColumn('trigger_id', 'integer', (c) => c.notNull().references('triggers.id').onDelete('cascade'))
      .addColumn('matched_at', 'text', (c) => c.notNull())
      // No foreign key: deleting a task would scan every match; reads join the task instead.
      .addColumn('task_id', 'integer')
      .addPrimaryKeyConstraint('trigger_matches_pk', ['ev_id', 'trigger_id']);
    if (dialect === 'sqlite') matches = matches.modifyEnd(sql`without rowid`);
    await matches.execute();
    await db.schema.createIndex('tasks_trigger').on('tasks').columns(['trigger_id', 'is_open']).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('tasks_trigger').execute();
    await db.schema.dropTable('trigger_matches').execute();
    await db.schema.dropTable('triggers').execute();
  },
});

/**
 * Whose rights a trigger runs with (docs/access.md; docs/api/triggers.md): `triggers.run_as`, the
 * user who last decided what it matches or where it sends; `channels.decided_by`, the user
 * who last set where a channel sends; `deliveries.run_as`, the user whose rights made a
 * notification (who may see its samples). Existing rows get their owner, whose rights they
 * ran with until now. A deleted user leaves null: a trigger then matches nothing.
 */
export const triggerRunAsMigration = (_dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    for (const [table, column] of [
      ['triggers', 'run_as'],
      ['channels', 'decided_by'],
      ['deliveries', 'run_as'],
    ] as const)
      await db.schema
        .alterTable(table)
        .addColumn(column, 'integer', (c) => c.references('users.id').onDelete('set null'))
        .execute();
    await sql`update triggers set run_as = owner_id`.execute(db);
    await sql`update channels set decided_by = owner_id`.execute(db);
    await sql`update deliveries set run_as = (select t.run_as from triggers t where t.id = deliveries.trigger_id)`.execute(
      db,
    );
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('deliveries').dropColumn('run_as').execute();
    await db.schema.alterTable('channels').dropColumn('decided_by').execute();
    await db.schema.alterTable('triggers').dropColumn('run_as').execute();
  },
});
