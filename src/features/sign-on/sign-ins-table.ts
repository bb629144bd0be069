import type { Kysely, Migration, Selectable } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';

/**
 * A sign-in with the provider under way: what the browser that started it must bring back.
 * `id` is a hash of the random key in that browser's cookie, so the callback is bound to
 * the browser, and the row is taken (deleted) by the first callback, so a replay finds
 * nothing. In the metadata store, so any node of a cluster can finish a sign-in.
 */
export interface OidcSignInsTable {
  id: string;
  state: string;
  nonce: string;
  code_verifier: string;
  /** The local path the user asked for. */
  next_path: string;
  expires_at: string;
}

export type SignInRow = Selectable<OidcSignInsTable>;

declare module '../../metadata/schema.js' {
  interface Database {
    oidc_sign_ins: OidcSignInsTable;
  }
}

export const signInsMigration = (_dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('oidc_sign_ins')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('code_verifier', 'text', (c) => c.notNull())
      .addColumn('next_path', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('oidc_sign_ins').execute();
  },
});
