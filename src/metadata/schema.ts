import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/**
 * Table types of the metadata store. Both dialects store timestamps as ISO 8601 UTC text
 * (sortable, identical on SQLite and PostgreSQL) and booleans as 0/1 integers.
 */
export interface UsersTable {
  id: Generated<number>;
  username: string;
  password_hash: string | null;
  is_admin: number;
  /** JSON array of permission names. */
  permissions: string;
  created_at: string;
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
}

export interface QueriesTable {
  query_id: string;
  owner_id: number;
  type: string;
  /** JSON of the params with defaults filled in. */
  params: string;
  created_at: string;
  last_used_at: string;
}

export interface Database {
  users: UsersTable;
  auth_tokens: AuthTokensTable;
  queries: QueriesTable;
}

export type QueryRow = Selectable<QueriesTable>;

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type TokenRow = Selectable<AuthTokensTable>;
export type NewTokenRow = Insertable<AuthTokensTable>;
