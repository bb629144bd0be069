import { randomBytes } from 'node:crypto';
import type { Static } from 'typebox';
import type { Identity } from '../../core/identity.js';
import type { Page, PageRequest } from '../../core/list.js';
import {
  authenticationFailed,
  conflict,
  fieldError,
  notFound,
  permissionDenied,
} from '../../errors/errors.js';
import { PERMISSIONS, type Permission } from '../../shared/permissions.js';
import type { UserRow } from './identity-table.js';
import { hashPassword, verifyPassword } from './passwords.js';
import type { AuthToken, TokensService } from './tokens-service.js';
import { isValidUsername, type UserSchema } from './user-schema.js';
import type { UsersRepository } from './users-repository.js';

/** User representation. */
export type User = Static<typeof UserSchema>;

/** The teams each user is in (`everyone` included), by user id: the teams component answers. */
export interface TeamMembership {
  teamsOfUsers(ids: readonly number[]): Promise<Map<number, number[]>>;
}

export interface UserInput {
  username?: string | undefined;
  password?: string | undefined;
  is_admin?: boolean | undefined;
  permissions?: Permission[] | undefined;
  local_login?: boolean | undefined;
  disabled?: boolean | undefined;
}

const presentUser = (row: UserRow, teams: number[]): User => ({
  id: row.id,
  username: row.username,
  is_admin: row.is_admin === 1,
  permissions: JSON.parse(row.permissions) as Permission[],
  teams,
  local_login: row.local_login === 1,
  sso: row.oidc_subject !== null,
  disabled: row.disabled === 1,
  created_at: row.created_at,
});

const canonicalPermissions = (list: Permission[]) => PERMISSIONS.filter((p) => list.includes(p));

export class UsersService {
  constructor(
    private readonly users: UsersRepository,
    private readonly tokens: TokensService,
    private readonly membership: TeamMembership,
  ) {}

  private async present(row: UserRow): Promise<User> {
    return (await this.presentAll([row]))[0] as User;
  }

  private async presentAll(rows: readonly UserRow[]): Promise<User[]> {
    const teams = await this.membership.teamsOfUsers(rows.map((r) => r.id));
    return rows.map((r) => presentUser(r, teams.get(r.id) ?? []));
  }

  /**
   * A user as a computation on their behalf knows them (a query's, report's owner): whether
   * they are an active administrator; none for a deleted or disabled user.
   */
  async owner(userId: number): Promise<{ userId: number; isAdmin: boolean } | undefined> {
    const row = await this.users.byId(userId);
    return row && row.disabled !== 1 ? { userId, isAdmin: row.is_admin === 1 } : undefined;
  }

  private requireAdmin(who: Identity) {
    if (!who.isAdmin) throw permissionDenied('Only administrators manage users.');
  }

  async me(who: Identity): Promise<User> {
    const row = await this.users.byId(who.userId);
    if (!row) throw notFound();
    return this.present(row);
  }

  async list(who: Identity, page: PageRequest): Promise<Page<User>> {
    this.requireAdmin(who);
    const res = await this.users.list(page);
    return { count: res.count, rows: await this.presentAll(res.rows) };
  }

  async get(who: Identity, id: number): Promise<User> {
    this.requireAdmin(who);
    const row = await this.users.byId(id);
    if (!row) throw notFound('No such user.');
    return this.present(row);
  }

  /** Creates a user; used by the API (admins) and the CLI (no caller). */
  async create(who: Identity | null, input: UserInput & { username: string }): Promise<User> {
    if (who) this.requireAdmin(who);
    checkUsername(input.username);
    const taken = await this.users.byUsernameIgnoringCase(input.username);
    if (taken) throw conflict(`User "${taken.username}" already exists (names are unique ignoring case).`);
    const row = await this.users.insert({
      username: input.username,
      password_hash: input.password ? await hashPassword(input.password) : null,
      is_admin: input.is_admin ? 1 : 0,
      permissions: JSON.stringify(canonicalPermissions(input.permissions ?? [])),
      local_login: input.local_login ? 1 : 0,
      created_at: new Date().toISOString(),
    });
    return this.present(row);
  }

  async update(who: Identity, id: number, input: UserInput): Promise<User> {
    this.requireAdmin(who);
    const current = await this.users.byId(id);
    if (!current) throw notFound('No such user.');
    if (input.username && input.username !== current.username) {
      checkUsername(input.username);
      const taken = await this.users.byUsernameIgnoringCase(input.username);
      if (taken && taken.id !== id)
        throw conflict(`User "${taken.username}" already exists (names are unique ignoring case).`);
    }
    if (id === who.userId && input.is_admin === false)
      throw conflict('You cannot remove your own admin rights.');
    if (id === who.userId && input.disabled === true) throw conflict('You cannot disable yourself.');
    const patch = {
      ...(input.username !== undefined ? { username: input.username } : {}),
      ...(input.password !== undefined ? { password_hash: await hashPassword(input.password) } : {}),
      ...(input.is_admin !== undefined ? { is_admin: input.is_admin ? 1 : 0 } : {}),
      ...(input.permissions !== undefined
        ? { permissions: JSON.stringify(canonicalPermissions(input.permissions)) }
        : {}),
      ...(input.local_login !== undefined ? { local_login: input.local_login ? 1 : 0 } : {}),
      ...(input.disabled !== undefined ? { disabled: input.disabled ? 1 : 0 } : {}),
    };
    // An empty PATCH changes nothing and answers the user as it is (like the other resources).
    if (Object.keys(patch).length === 0) return this.present(current);
    const row = await this.users.update(id, patch);
    if (!row) throw notFound('No such user.');
    // Disabled: every token goes (sessions, API and INGEST tokens alike), and with them,
    // on every node, the cached identities and the live connections (4401).
    if (input.disabled === true) await this.tokens.deleteAllOf(id);
    else this.tokens.invalidate();
    return this.present(row);
  }

  async delete(who: Identity, id: number): Promise<void> {
    this.requireAdmin(who);
    if (id === who.userId) throw conflict('You cannot delete yourself.');
    if (!(await this.users.delete(id))) throw notFound('No such user.');
    this.tokens.invalidate();
  }

  /**
   * A session: a new USER token for a correct username and password, expiring after
   * `sessionMs`; logging out is deleting it. Every refusal (unknown user, wrong password,
   * no password, disabled, password sign-in off for this user) gives the same answer after
   * the same password work, so none tells an account's state or a correct password.
   */
  async login(
    username: string,
    password: string,
    sessionMs: number,
    passwordLogin = true,
  ): Promise<AuthToken> {
    const row = await this.users.byUsername(username);
    // Verify against a dummy hash when the user is unknown, so timing does not reveal it.
    const ok = await verifyPassword(password, row?.password_hash ?? DUMMY_HASH);
    // With password sign-in off, only the break-glass accounts may (`/api/auth/methods` says it is off).
    const allowed = passwordLogin || row?.local_login === 1;
    if (!row?.password_hash || !ok || row.disabled === 1 || !allowed)
      throw authenticationFailed(INVALID_LOGIN);
    return this.tokens.create(row.id, {
      token_type: 'USER',
      name: 'login',
      expires_at: new Date(Date.now() + sessionMs).toISOString(),
    });
  }

  /**
   * On an empty store: the user `admin` with every right, a random password (for the web
   * UI's sign-in) and a USER token (for API clients), both handed back once.
   */
  async bootstrapAdmin(): Promise<{ token: AuthToken; password: string } | null> {
    if ((await this.users.count()) > 0) return null;
    // 18 random bytes: 24 characters of base64url, about 144 bits.
    const password = randomBytes(18).toString('base64url');
    const admin = await this.create(null, {
      username: 'admin',
      password,
      is_admin: true,
      permissions: [...PERMISSIONS],
    });
    const token = await this.tokens.create(admin.id, { token_type: 'USER', name: 'admin (first start)' });
    return { token, password };
  }
}

function checkUsername(name: string): void {
  if (!isValidUsername(name))
    throw fieldError('username', 'Letters, digits and _.@+- only, 1 to 150 characters.');
}

/** The one answer to a refused password sign-in, whatever the reason. */
export const INVALID_LOGIN = 'Invalid username or password.';

const DUMMY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
