import type { Kysely, Migration } from 'kysely';
import type { MetadataDialect } from '../database.js';
import { idColumn } from './helpers.js';

export const initial = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await idColumn(db.schema.createTable('users'), dialect)
      .addColumn('username', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text')
      .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('permissions', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await idColumn(db.schema.createTable('auth_tokens'), dialect)
      .addColumn('key_id', 'text', (c) => c.notNull().unique())
      .addColumn('secret_hash', 'text', (c) => c.notNull())
      .addColumn('token_type', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text')
      .addColumn('last_used_at', 'text')
      .execute();
    await db.schema.createIndex('auth_tokens_owner').on('auth_tokens').column('owner_id').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('auth_tokens').execute();
    await db.schema.dropTable('users').execute();
  },
});
