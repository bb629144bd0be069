import { type Kysely, type Migration, sql } from 'kysely';
import type { MetadataDialect } from '../database.js';
import { idColumn } from './helpers.js';

/**
 * Triggers (API.md §7) and their matches. A match row is what
 * `GET /api/events/{ev_id}/triggers` lists; it goes with its trigger. Tasks keep their
 * `trigger_id` when the trigger is deleted (the service clears it), as a closed alert
 * in Graylog keeps its history.
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

    await idColumn(db.schema.createTable('trigger_matches'), dialect)
      .addColumn('trigger_id', 'integer', (c) => c.notNull().references('triggers.id').onDelete('cascade'))
      .addColumn('ev_id', 'text', (c) => c.notNull())
      .addColumn('matched_at', 'text', (c) => c.notNull())
      .addColumn('task_id', 'integer', (c) => c.references('tasks.id').onDelete('set null'))
      .execute();
    await db.schema.createIndex('trigger_matches_ev_id').on('trigger_matches').column('ev_id').execute();
    await db.schema
      .createIndex('trigger_matches_trigger')
      .on('trigger_matches')
      .column('trigger_id')
      .execute();
    await db.schema.createIndex('tasks_trigger').on('tasks').columns(['trigger_id', 'is_open']).execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('tasks_trigger').execute();
    await db.schema.dropTable('trigger_matches').execute();
    await db.schema.dropTable('triggers').execute();
  },
});
