import * as client from 'openid-client';
import type { Static } from 'typebox';
import type { OidcSchema } from '../../config/config.js';
import type { Log } from '../../core/log.js';

export type OidcSettings = Static<typeof OidcSchema>;

/** The first wait before discovery is tried again after a failure (ms); it doubles up to the next. */
const RETRY_FIRST_MS = 1_000;
const RETRY_MAX_MS = 60_000;

/** The provider does not answer (or answers nonsense) at discovery. */
export class ProviderUnavailable extends Error {
  override name = 'ProviderUnavailable';
}

/**
 * Logscope as an OpenID relying party, on `openid-client` (certified): the provider's
 * discovery document read once per process (at start, or at the first sign-in after), and
 * ID tokens checked for their signature too (non-repudiation), not only their claims; the
 * keys are fetched from `jwks_uri`, again when a token names an unknown one, so rotation
 * needs no new discovery. Discovery is never run per request: anonymous sign-in starts
 * cannot make the server call the provider at their pace. A provider that does not answer
 * stops nothing: one warning when it stops answering, a clear error to whoever tries to
 * sign in with it, and discovery tried again after a wait that doubles from 1 s to 60 s
 * (sign-ins meanwhile are told at once). A provider that stops answering at a sign-in's
 * code exchange has its document read again the same way (`forget`).
 */
export class RelyingParty {
  private current: client.Configuration | null = null;
  private discovering: Promise<client.Configuration> | null = null;
  private down = false;
  /** After a failure: no discovery before this time (epoch ms), and the next wait. */
  private retryAt = 0;
  private retryMs = RETRY_FIRST_MS;

  constructor(
    readonly settings: OidcSettings,
    private readonly log: Log,
    private readonly now: () => number = Date.now,
  ) {}

  /** The provider's configuration: discovered once, again only after a failure (with backoff). */
  async provider(): Promise<client.Configuration> {
    if (this.current) return this.current;
    if (!this.discovering && this.now() < this.retryAt)
      throw new ProviderUnavailable(`The sign-in provider at ${this.settings.issuer} does not answer.`);
    this.discovering ??= this.discover().finally(() => {
      this.discovering = null;
    });
    return this.discovering;
  }

  /** The provider failed to answer after discovery: read its document again at the next sign-in. */
  forget(): void {
    this.current = null;
  }

  private async discover(): Promise<client.Configuration> {
    const { issuer, clientId, clientSecret } = this.settings;
    try {
      const config = await client.discovery(
        new URL(issuer),
        clientId,
        { client_secret: clientSecret },
        client.ClientSecretBasic(clientSecret),
        {
          timeout: 5,
          // http:// is allowed only for a loopback issuer (checked with the configuration).
          execute: [
            client.enableNonRepudiationChecks,
            ...(issuer.startsWith('http:') ? [client.allowInsecureRequests] : []),
          ],
        },
      );
      if (this.down) this.log.info({ issuer }, 'The OpenID provider answers again');
      this.down = false;
      this.retryMs = RETRY_FIRST_MS;
      this.current = config;
      return config;
    } catch (err) {
      this.current = null;
      this.retryAt = this.now() + this.retryMs;
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
      if (!this.down)
        this.log.warn(
          { issuer, err: (err as Error).message },
          'The OpenID provider does not answer; sign-in with it fails until it does (password sign-in is unaffected)',
        );
      this.down = true;
      throw new ProviderUnavailable(`The sign-in provider at ${issuer} does not answer.`);
    }
  }

  /** The scopes asked for: the configured ones, and `groups` when the provider offers it. */
  scopes(config: client.Configuration): string {
    const scopes = this.settings.scopes.split(/\s+/).filter(Boolean);
    const offered = config.serverMetadata().scopes_supported ?? [];
    if (offered.includes('groups') && !scopes.includes('groups')) scopes.push('groups');
    if (!scopes.includes('openid')) scopes.unshift('openid');
    return scopes.join(' ');
  }
}
