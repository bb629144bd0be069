import { type Kysely, type Migration, sql } from 'kysely';
import type { MetadataDialect } from '../database.js';
import { idColumn } from './helpers.js';

/**
 * Triggers and their matches. A match row is what
 * `GET /api/events/{ev_id}/triggers` lists; it goes with its trigger. The tasks a trigger
 * opened stay when it is deleted (the repository clears their `trigger_id`), as a closed
 * alert in Graylog keeps its history.
 */
export const triggers = (dialect: MetadataDialect): Migration => ({
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
