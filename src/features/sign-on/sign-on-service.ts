import { createHash, randomBytes } from 'node:crypto';
import * as client from 'openid-client';
import { conflict, createError } from '../../errors/errors.js';
import { PERMISSIONS } from '../../shared/permissions.js';
import { INVALID_LOGIN, type UserRow } from '../identity/index.js';
import type { AuthToken, TokensService } from '../identity/tokens-service.js';
import { isValidUsername } from '../identity/user-schema.js';
import { ProviderUnavailable, type RelyingParty } from './relying-party.js';
import type { SignOnRepository } from './sign-on-repository.js';

/** How long a started sign-in may take at the provider (ms). */
export const SIGN_IN_MS = 10 * 60_000;

export interface SignOnOptions {
  /** Where the provider sends the browser back: `<public URL>/api/auth/oidc/callback`. */
  redirectUri: () => string;
  sessionMs: number;
  /** Sign-ins under way kept at most (`oidc.maxPendingSignIns`). */
  maxPending: number;
  /** Told when a user's rights (admin, teams) changed, so every node reads them again. */
  rightsChanged: () => void;
}

/** A local path to go back to after signing in; anything else is the search page. */
export function localPath(next: unknown): string {
  if (typeof next !== 'string' || !next.startsWith('/') || next.startsWith('//') || next.includes('\\'))
    return '/search';
  return next.slice(0, 2000);
}

const hash = (key: string) => createHash('sha256').update(key).digest('base64url');

/**
 * Sign-in with the OpenID provider (docs/sign-on.md): authorization code flow with PKCE, `state`
 * bound to the browser and `nonce`; users created at their first sign-in (with
 * `oidc.defaultPermissions`, none unless configured) and found again by the provider's
 * identity (`iss`, `sub`), never by name; admin rights and the members of teams marked
 * `provider_synced` from the groups claim at every sign-in. The session token is marked
 * `sign_on`, so tokens made with it expire with it at the latest. Every refusal (a
 * disabled user's included) is a 401 that creates nothing.
 */
export class SignOnService {
  constructor(
    private readonly rp: RelyingParty,
    private readonly repo: SignOnRepository,
    private readonly tokens: TokensService,
    private readonly opts: SignOnOptions,
  ) {}

  /**
   * Starts a sign-in: the provider's authorization URL, and the key the browser keeps
   * (in a cookie) to finish it. Throws ProviderUnavailable when the provider does not answer.
   */
  async begin(next: unknown): Promise<{ url: string; browserKey: string }> {
    const config = await this.rp.provider();
    const browserKey = randomBytes(32).toString('base64url');
    const state = client.randomState();
    const nonce = client.randomNonce();
    const verifier = client.randomPKCECodeVerifier();
    await this.repo.begin(
      {
        id: hash(browserKey),
        state,
        nonce,
        code_verifier: verifier,
        next_path: localPath(next),
        expires_at: new Date(Date.now() + SIGN_IN_MS).toISOString(),
      },
      this.opts.maxPending,
    );
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: this.opts.redirectUri(),
      scope: this.rp.scopes(config),
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { url: url.href, browserKey };
  }

  /**
   * Finishes a sign-in from the provider's answer (`callbackUrl`, the URL it sent the
   * browser to) and the browser's key: checks it all, then creates or updates the user and
   * gives a session token. Refused (401, nothing created) unless everything holds.
   */
  async complete(
    browserKey: string | undefined,
    callbackUrl: URL,
  ): Promise<{ token: AuthToken; user: UserRow; next: string }> {
    if (!browserKey) throw refused('This browser did not start a sign-in (or it took too long).');
    const started = await this.repo.take(hash(browserKey));
    if (!started) throw refused('This sign-in is unknown, was used already or took too long.');
    const providerError = callbackUrl.searchParams.get('error');
    if (providerError)
      throw refused(
        `The provider refused the sign-in: ${callbackUrl.searchParams.get('error_description') ?? providerError}.`,
      );
    if (callbackUrl.searchParams.get('state') !== started.state)
      throw refused('The answer does not belong to the sign-in this browser started.');
    const config = await this.rp.provider();
    // The callback URL as the provider was told it (the public URL), with the answer's query.
    const answered = new URL(this.opts.redirectUri());
    answered.search = callbackUrl.search;
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.authorizationCodeGrant(config, answered, {
        pkceCodeVerifier: started.code_verifier,
        expectedState: started.state,
        expectedNonce: started.nonce,
        idTokenExpected: true,
      });
      claims = { ...(tokens.claims() ?? {}) };
      const { usernameClaim, groupsClaim } = this.rp.settings;
      // Some providers put the name or the groups only in the userinfo answer.
      if (
        (claims[usernameClaim] === undefined || claims[groupsClaim] === undefined) &&
        config.serverMetadata().userinfo_endpoint
      ) {
        const info = await client.fetchUserInfo(config, tokens.access_token, String(claims.sub));
        claims = { ...info, ...claims };
        for (const k of [usernameClaim, groupsClaim])
          if (claims[k] === undefined && info[k] !== undefined) claims[k] = info[k];
      }
    } catch (err) {
      if (err instanceof ProviderUnavailable) throw err;
      // fetch's own failures: the provider did not answer (not a refusal of the answer).
      const name = (err as Error).name;
      if (name === 'TypeError' || name === 'TimeoutError' || name === 'AbortError') {
        this.rp.forget();
        throw new ProviderUnavailable(`The sign-in provider at ${this.rp.settings.issuer} does not answer.`);
      }
      throw refused(`The provider's answer was refused: ${describe(err)}`);
    }
    const user = await this.signIn(claims);
    const token = await this.tokens.create(user.id, {
      token_type: 'USER',
      name: 'single sign-on',
      expires_at: new Date(Date.now() + this.opts.sessionMs).toISOString(),
      sign_on: true,
    });
    return { token, user, next: started.next_path };
  }

  /** The user of these (checked) claims: found by `iss` and `sub`, created at the first sign-in. */
  private async signIn(claims: Record<string, unknown>): Promise<UserRow> {
    const { usernameClaim, groupsClaim, adminGroups, teamsFromGroups, defaultPermissions } = this.rp.settings;
    const issuer = String(claims.iss);
    const subject = String(claims.sub);
    const username = claims[usernameClaim];
    if (typeof username !== 'string' || !username.trim())
      throw refused(`The provider gave no usable "${usernameClaim}" claim.`);
    // The local rules: no name passes for another (`аdmin`, `Admin`) by where it came from.
    // A new user with another name is refused; a known one keeps the name they have.
    const valid = isValidUsername(username);
    const groups = groupsOf(claims[groupsClaim]);
    const admin = adminGroups.length ? groups.some((g) => adminGroups.includes(g)) : undefined;
    let user = await this.repo.byIdentity(issuer, subject);
    // Disabled by an admin: refused as a wrong password is, before anything changes.
    if (user?.disabled === 1) throw refused(INVALID_LOGIN);
    let changed = false;
    if (!user) {
      if (!valid)
        throw refused(
          `The provider's "${usernameClaim}" claim is not a valid username here (letters, digits and _.@+- only, 1 to 150 characters). An administrator can choose another claim (oidc.usernameClaim).`,
        );
      const taken = await this.repo.byUsername(username);
      if (taken)
        throw conflict(
          `An account named "${username}" already exists and was not created by this provider; it is never linked to it. An administrator can rename one of them.`,
        );
      user = await this.repo.insertUser({
        username,
        password_hash: null,
        is_admin: admin ? 1 : 0,
        permissions: JSON.stringify(
          admin
            ? PERMISSIONS
            : PERMISSIONS.filter((p) => (defaultPermissions as readonly string[]).includes(p)),
        ),
        created_at: new Date().toISOString(),
        oidc_issuer: issuer,
        oidc_subject: subject,
      });
    } else {
      const patch: { username?: string; is_admin?: number } = {};
      // Renamed at the provider: the account follows, unless the new name breaks the local
      // rules or (ignoring case) is someone else's.
      if (valid && username !== user.username) {
        const other = await this.repo.byUsername(username);
        if (!other || other.id === user.id) patch.username = username;
      }
      if (admin !== undefined && (admin ? 1 : 0) !== user.is_admin) patch.is_admin = admin ? 1 : 0;
      if (Object.keys(patch).length) {
        user = (await this.repo.updateUser(user.id, patch)) ?? user;
        changed = patch.is_admin !== undefined;
      }
    }
    if (teamsFromGroups && (await this.repo.setSyncedTeams(user.id, groups))) changed = true;
    if (changed) this.opts.rightsChanged();
    return user;
  }
}

/** A groups claim: an array of names (or one name); Keycloak's paths lose their leading `/`. */
function groupsOf(raw: unknown): string[] {
  const list = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
  return list
    .filter((g): g is string => typeof g === 'string')
    .map((g) => g.replace(/^\//, '').trim())
    .filter((g) => g.length > 0 && g.length <= 200)
    .slice(0, 500);
}

/** What was wrong with the provider's answer, in the library's words (never a token). */
function describe(err: unknown): string {
  const e = err as { error_description?: string; error?: string; message?: string; cause?: unknown };
  const base = e.error_description ?? e.error ?? e.message ?? 'unknown error';
  const cause = e.cause as { message?: string; claim?: string } | undefined;
  const why = cause?.claim
    ? `the "${cause.claim}" claim`
    : typeof cause?.message === 'string'
      ? cause.message
      : '';
  return why && !why.includes('eyJ') ? `${base} (${why})` : base;
}

const refused = (message: string) => createError(401, 'sign_in_refused', message);
