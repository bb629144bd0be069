import type { Kysely, Migration, Selectable } from 'kysely';

export interface QueriesTable {
  query_id: string;
  owner_id: number;
  type: string;
  /** JSON of the params with defaults filled in. */
  params: string;
  created_at: string;
  last_used_at: string;
}

declare module '../../metadata/schema.js' {
  interface Database {
    queries: QueriesTable;
  }
}

export type QueryRow = Selectable<QueriesTable>;

/** Query definitions; their results live with the runner (recomputed after a restart). */
export const queriesMigration = (): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('queries')
      .addColumn('query_id', 'text', (c) => c.primaryKey())
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('params', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('queries_last_used').on('queries').column('last_used_at').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('queries').execute();
  },
});
