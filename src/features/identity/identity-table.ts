import type { Generated, Insertable, Kysely, Migration, Selectable, Updateable } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';
import { idColumn } from '../../metadata/migrations/helpers.js';

/**
 * Users and their tokens. Like every table of the metadata store, timestamps are ISO 8601
 * UTC text (sortable, identical on SQLite and PostgreSQL) and booleans 0/1 integers.
 */
export interface UsersTable {
  id: Generated<number>;
  username: string;
  password_hash: string | null;
  is_admin: number;
  /** JSON array of permission names. */
  permissions: string;
  created_at: string;
  /** 1: may sign in with a password even when single sign-on turns password sign-in off. */
  local_login: Generated<number>;
  /** The OpenID provider's identity of the user (`iss`, `sub`); null for local users. */
  oidc_issuer: string | null;
  oidc_subject: string | null;
  /** 1: disabled by an admin (holds no token, may not sign in, reads nothing). */
  disabled: Generated<number>;
}

export interface AuthTokensTable {
  id: Generated<number>;
  key_id: string;
  secret_hash: string;
  token_type: 'USER' | 'INGEST';
  name: string;
  owner_id: number;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
  /**
   * 1: a single sign-on session, or made with one (or with such a token): it expires no
   * later than the session it came from, and tokens made with it are bound the same way.
   */
  sign_on: Generated<number>;
}

declare module '../../metadata/schema.js' {
  interface Database {
    users: UsersTable;
    auth_tokens: AuthTokensTable;
  }
}

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type TokenRow = Selectable<AuthTokensTable>;
export type NewTokenRow = Insertable<AuthTokensTable>;

/** The first migration of all: every other table refers to `users`. */
export const usersMigration = (dialect: MetadataDialect): Migration => ({
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

/**
 * Users of single sign-on: `local_login` marks the break-glass accounts that may still
 * sign in with a password when `oidc.passwordLogin` is false; `oidc_issuer` and
 * `oidc_subject` are the provider's identity of a user it signed in (`iss`, `sub`), unique,
 * so an account is found by them and never by its name.
 */
export const signOnUsersMigration = (_dialect: MetadataDialect): Migration => ({
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

/**
 * `users.disabled`: an admin can disable a user (tokens deleted, sign-ins refused), and
 * `auth_tokens.sign_on`: a single sign-on session and the tokens made with it, which expire
 * with it at the latest. Sessions made by sign-on before this migration are marked by the
 * name sign-on gave them.
 */
export const usersDisabledMigration = (_dialect: MetadataDialect): Migration => ({
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
