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

/** A task's priority, and a trigger's severity (the tasks it opens get it). */
export type TaskPriority = 'low' | 'medium' | 'high' | 'critical';

export interface TasksTable {
  id: Generated<number>;
  title: string;
  description: string;
  owner_id: number;
  assigned_to: number | null;
  is_open: number;
  due_date: string | null;
  priority: TaskPriority;
  /** JSON array of event ids. */
  ev_ids: string;
  trigger_id: number | null;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
}

declare module '../../metadata/schema.js' {
  interface Database {
    tasks: TasksTable;
  }
}

export type TaskRow = Selectable<TasksTable>;
export type NewTaskRow = Insertable<TasksTable>;
export type TaskUpdate = Updateable<TasksTable>;

/**
 * The team's task board. `trigger_id` has no foreign key yet: triggers come later and
 * their migration adds it.
 */
export const tasksMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await idColumn(db.schema.createTable('tasks'), dialect)
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('assigned_to', 'integer', (c) => c.references('users.id').onDelete('set null'))
      .addColumn('is_open', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('due_date', 'text')
      .addColumn('priority', 'text', (c) => c.notNull().defaultTo('medium'))
      .addColumn('ev_ids', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('trigger_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('closed_at', 'text')
      .addCheckConstraint('tasks_priority', sql`priority in ('low', 'medium', 'high', 'critical')`)
      .addCheckConstraint('tasks_is_open', sql`is_open in (0, 1)`)
      .execute();
    await db.schema.createIndex('tasks_owner').on('tasks').column('owner_id').execute();
    await db.schema.createIndex('tasks_assigned_to').on('tasks').column('assigned_to').execute();
    await db.schema.createIndex('tasks_is_open').on('tasks').column('is_open').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('tasks').execute();
  },
});
