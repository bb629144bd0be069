/** What a user may hold besides admin. The web UI's Settings imports this list: keep this file free of imports. */
export const PERMISSIONS = [
  'manage_dashboards',
  'manage_widgets',
  'manage_tasks',
  'manage_tokens',
  'manage_triggers',
  'manage_pipelines',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export type TokenType = 'USER' | 'INGEST';
export const TOKEN_TYPES: readonly TokenType[] = ['USER', 'INGEST'];

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
