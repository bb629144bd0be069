import { timingSafeEqual } from 'node:crypto';
import type { Static } from 'typebox';
import { can, type Identity, type TokenType } from '../../core/identity.js';
import type { Page, PageRequest } from '../../core/list.js';
import { authenticationFailed, fieldError, notFound, permissionDenied } from '../../errors/errors.js';
import type { Permission } from '../../shared/permissions.js';
import type { TokenRow, UserRow } from './identity-table.js';
import { hashSecret, keyIdOf, maskKey, newSecretKey } from './secrets.js';
import type { TokensRepository } from './tokens-repository.js';
import type { AuthTokenSchema } from './user-schema.js';
import type { UsersRepository } from './users-repository.js';

/** AuthToken representation. */
export type AuthToken = Static<typeof AuthTokenSchema>;

export interface NewToken {
  token_type: TokenType;
  name?: string | undefined;
  expires_at?: string | null | undefined;
  /** A single sign-on session (tokens made with it expire with it at the latest). */
  sign_on?: boolean | undefined;
}

const present = (row: TokenRow, secretKey?: string): AuthToken => ({
  secret_key: secretKey ?? maskKey(row.key_id),
  key_id: row.key_id,
  token_type: row.token_type,
  name: row.name,
  owner_id: row.owner_id,
  created_at: row.created_at,
  expires_at: row.expires_at,
  last_used_at: row.last_used_at,
});

interface CacheEntry {
  identity: Identity;
  hash: string;
  expiresAt: number | null;
  cachedAt: number;
  touchedAt: number;
}

// last_used_at is a hint, not an audit log: one write a minute per token is plenty.
const TOUCH_EVERY_MS = 60_000;

export function identityOf(user: UserRow, token: Pick<TokenRow, 'token_type' | 'key_id'>): Identity {
  return Object.freeze({
    userId: user.id,
    username: user.username,
    isAdmin: user.is_admin === 1,
    permissions: new Set(JSON.parse(user.permissions) as Permission[]),
    tokenType: token.token_type,
    keyId: token.key_id,
  });
}

export class TokensService {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly listeners = new Set<(keyId: string | undefined, elsewhere: boolean) => void>();

  constructor(
    private readonly tokens: TokensRepository,
    private readonly users: UsersRepository,
    private readonly cacheMs: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Resolves a presented secret key to the caller, or throws 401. */
  async authenticate(secretKey: string): Promise<Identity> {
    const keyId = keyIdOf(secretKey);
    const hash = hashSecret(secretKey);
    const nowMs = this.now().getTime();
    let entry = this.cache.get(keyId);
    if (!entry || entry.hash !== hash || nowMs - entry.cachedAt > this.cacheMs) {
      entry = await this.load(keyId, hash, nowMs);
    }
    if (entry.expiresAt !== null && entry.expiresAt <= nowMs) {
      this.cache.delete(keyId);
      throw authenticationFailed('Token has expired.');
    }
    if (nowMs - entry.touchedAt > TOUCH_EVERY_MS) {
      entry.touchedAt = nowMs;
      // `last_used_at` is a hint: a write that fails (a full disk) must not fail the request.
      await this.tokens.touch(keyId, new Date(nowMs).toISOString()).catch(() => undefined);
    }
    return entry.identity;
  }

  private async load(keyId: string, hash: string, nowMs: number): Promise<CacheEntry> {
    const row = await this.tokens.byKeyId(keyId);
    if (!row || !safeEqual(row.secret_hash, hash)) {
      this.cache.delete(keyId);
      throw authenticationFailed();
    }
    const user = await this.users.byId(row.owner_id);
    // A disabled user's tokens are deleted; one made since (by the CLI, by a race) fails too.
    if (!user || user.disabled === 1) throw authenticationFailed();
    const entry: CacheEntry = {
      identity: identityOf(user, row),
      hash,
      expiresAt: row.expires_at ? Date.parse(row.expires_at) : null,
      cachedAt: nowMs,
      touchedAt: row.last_used_at ? Date.parse(row.last_used_at) : 0,
    };
    this.cache.set(keyId, entry);
    return entry;
  }

  /**
   * The identity behind a token as the metadata store has it now (no cache): null when the
   * token was deleted or has expired, or its user is gone or disabled. Long-lived connections re-check
   * with it; it reads the shared store, so a change made by another process counts too.
   */
  async current(keyId: string): Promise<Identity | null> {
    const row = await this.tokens.byKeyId(keyId);
    if (!row) return null;
    if (row.expires_at !== null && Date.parse(row.expires_at) <= this.now().getTime()) return null;
    const user = await this.users.byId(row.owner_id);
    return user && user.disabled !== 1 ? identityOf(user, row) : null;
  }

  /**
   * Calls `listener` whenever this process changed tokens or rights (a hint to re-check
   * at once; other processes' changes are found by periodic re-checks). Returns `off`.
   */
  onInvalidate(listener: (keyId: string | undefined, elsewhere: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Forgets cached identities, e.g. after a user's rights change. `elsewhere`: another
   * node made the change (cluster: it said so on the bus).
   */
  invalidate(keyId?: string, elsewhere = false): void {
    if (keyId) this.cache.delete(keyId);
    else this.cache.clear();
    for (const listener of this.listeners) listener(keyId, elsewhere);
  }

  /**
   * A token the caller makes with the token they call with (`POST /api/authtokens`). One
   * made with a single sign-on session, or with a token made so, is bound to it: it
   * expires no later than the caller's token (an `expires_at` left out or later becomes
   * that time), so a person removed at the provider keeps nothing past their session.
   */
  async createAs(who: Identity, input: NewToken): Promise<AuthToken> {
    const own = await this.tokens.byKeyId(who.keyId);
    if (own?.sign_on !== 1) return this.create(who.userId, { ...input, sign_on: false });
    const until = own.expires_at;
    const asked = input.expires_at ? Date.parse(input.expires_at) : Number.NaN;
    const expires =
      until !== null &&
      (input.expires_at === null || input.expires_at === undefined || asked > Date.parse(until))
        ? until
        : input.expires_at;
    return this.create(who.userId, { ...input, expires_at: expires, sign_on: true });
  }

  async create(ownerId: number, input: NewToken): Promise<AuthToken> {
    const nowIso = this.now().toISOString();
    let expiresAt: string | null = null;
    if (input.expires_at) {
      const t = Date.parse(input.expires_at);
      if (Number.isNaN(t)) throw fieldError('expires_at', 'Not a valid ISO 8601 date-time.');
      if (t <= this.now().getTime()) throw fieldError('expires_at', 'Must be in the future.');
      expiresAt = new Date(t).toISOString();
    }
    const { keyId, secretKey } = newSecretKey();
    const row = await this.tokens.insert({
      key_id: keyId,
      secret_hash: hashSecret(secretKey),
      token_type: input.token_type,
      name: input.name ?? '',
      owner_id: ownerId,
      created_at: nowIso,
      expires_at: expiresAt,
      last_used_at: null,
      sign_on: input.sign_on ? 1 : 0,
    });
    return present(row, secretKey);
  }

  async list(
    who: Identity,
    opts: { showAll: boolean; tokenTypes?: TokenType[] },
    page: PageRequest,
  ): Promise<Page<AuthToken>> {
    const all = opts.showAll && can(who, 'manage_tokens');
    const res = await this.tokens.list(
      {
        ...(all ? {} : { ownerId: who.userId }),
        ...(opts.tokenTypes ? { tokenTypes: opts.tokenTypes } : {}),
        activeAt: this.now().toISOString(),
      },
      page,
    );
    return { count: res.count, rows: res.rows.map((r) => present(r)) };
  }

  async get(who: Identity, keyOrId: string): Promise<AuthToken> {
    return present(await this.visible(who, keyOrId));
  }

  /** Deletes every token of a user (a disabled user's); their connections end at once. */
  async deleteAllOf(userId: number): Promise<void> {
    await this.tokens.deleteByOwner(userId);
    this.invalidate();
  }

  async delete(who: Identity, keyOrId: string): Promise<void> {
    const row = await this.visible(who, keyOrId);
    await this.tokens.delete(row.key_id);
    this.invalidate(row.key_id);
  }

  private async visible(who: Identity, keyOrId: string): Promise<TokenRow> {
    const row = await this.tokens.byKeyId(keyIdOf(keyOrId));
    const expired = row?.expires_at ? Date.parse(row.expires_at) <= this.now().getTime() : false;
    if (!row || expired || (row.owner_id !== who.userId && !can(who, 'manage_tokens'))) {
      throw notFound('No such token.');
    }
    return row;
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export const requireUserToken = (who: Identity) => {
  if (who.tokenType !== 'USER') throw permissionDenied('An INGEST token may only send events.');
};
