import type { Kysely, Migration } from 'kysely';
import type { MetadataDialect } from '../database.js';

/**
 * `users.disabled`: an admin can disable a user (tokens deleted, sign-ins refused), and
 * `auth_tokens.sign_on`: a single sign-on session and the tokens made with it, which expire
 * with it at the latest. Sessions made by sign-on before this migration are marked by the
 * name sign-on gave them.
 */
export const usersDisabled = (_dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('users')
      .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('auth_tokens')
      .addColumn('sign_on', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await (db as Kysely<{ auth_tokens: { sign_on: number; name: string } }>)
      .updateTable('auth_tokens')
      .set({ sign_on: 1 })
      .where('name', '=', 'single sign-on')
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('auth_tokens').dropColumn('sign_on').execute();
    await db.schema.alterTable('users').dropColumn('disabled').execute();
  },
});
