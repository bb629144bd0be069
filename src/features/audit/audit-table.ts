import type { Generated, Kysely, Migration } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';
import { idColumn } from '../../metadata/migrations/helpers.js';

/** One audit record: who did what to what, from where, and how it ended. Never changed. */
export interface AuditTable {
  id: Generated<number>;
  at: string;
  /** Null when nobody was signed in (a failed sign-in). No foreign key: records outlive users. */
  user_id: number | null;
  username: string | null;
  token_key_id: string | null;
  address: string | null;
  action: string;
  target_kind: string | null;
  target_id: string | null;
  /** JSON object. */
  detail: string;
  outcome: string;
}

declare module '../../metadata/schema.js' {
  interface Database {
    audit_events: AuditTable;
  }
}

export const auditMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await idColumn(db.schema.createTable('audit_events'), dialect)
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('user_id', 'integer')
      .addColumn('username', 'text')
      .addColumn('token_key_id', 'text')
      .addColumn('address', 'text')
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('target_kind', 'text')
      .addColumn('target_id', 'text')
      .addColumn('detail', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('outcome', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('audit_events_at').on('audit_events').column('at').execute();
    await db.schema.createIndex('audit_events_user').on('audit_events').column('user_id').execute();
    await db.schema.createIndex('audit_events_action').on('audit_events').column('action').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('audit_events').execute();
  },
});
