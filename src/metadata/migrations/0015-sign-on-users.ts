import type { Kysely, Migration } from 'kysely';
import type { MetadataDialect } from '../database.js';

/**
 * Users of single sign-on: `local_login` marks the break-glass accounts that may still
 * sign in with a password when `oidc.passwordLogin` is false; `oidc_issuer` and
 * `oidc_subject` are the provider's identity of a user it signed in (`iss`, `sub`), unique,
 * so an account is found by them and never by its name.
 */
export const signOnUsers = (_dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('users')
      .addColumn('local_login', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('users').addColumn('oidc_issuer', 'text').execute();
    await db.schema.alterTable('users').addColumn('oidc_subject', 'text').execute();
    await db.schema
      .createIndex('users_oidc_identity')
      .on('users')
      .columns(['oidc_issuer', 'oidc_subject'])
      .unique()
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('users_oidc_identity').execute();
    for (const column of ['oidc_subject', 'oidc_issuer', 'local_login'])
      await db.schema.alterTable('users').dropColumn(column).execute();
  },
});
