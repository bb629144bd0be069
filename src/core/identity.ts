import type { Permission } from '../shared/permissions.js';

export const TOKEN_TYPES = ['USER', 'INGEST'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];

/** Who is calling: resolved from the token on every request. */
export interface Identity {
  readonly userId: number;
  readonly username: string;
  readonly isAdmin: boolean;
  readonly permissions: ReadonlySet<Permission>;
  readonly tokenType: TokenType;
  readonly keyId: string;
}

/** Admins hold every permission. */
export const can = (who: Identity, permission: Permission): boolean =>
  who.isAdmin || who.permissions.has(permission);
