import * as client from 'openid-client';
import type { Static } from 'typebox';
import type { OidcSchema } from '../../config/config.js';
import type { Log } from '../../core/log.js';

export type OidcSettings = Static<typeof OidcSchema>;

/** How long a discovered provider is trusted before its document is read again (ms). */
const REDISCOVER_MS = 60_000;

/** The provider does not answer (or answers nonsense) at discovery. */
export class ProviderUnavailable extends Error {
  override name = 'ProviderUnavailable';
}

/**
 * Logscope as an OpenID relying party, on `openid-client` (certified): the provider's
 * discovery document read at start and again whenever a sign-in starts (so a provider that
 * stopped answering is known before the browser is sent to it, and new endpoints and keys
 * are taken up: the keys are fetched from `jwks_uri`, again when a token names an unknown one), and ID tokens checked for their
 * signature too (non-repudiation), not only their claims. A provider that does not answer
 * stops nothing: one warning when it stops answering, a clear error to whoever tries to
 * sign in with it, and the next sign-in tries again.
 */
export class RelyingParty {
  private current: { config: client.Configuration; at: number } | null = null;
  private discovering: Promise<client.Configuration> | null = null;
  private down = false;

  constructor(
    readonly settings: OidcSettings,
    private readonly log: Log,
  ) {}

  /**
   * The provider's configuration: cached for a minute, read again after that or a failure;
   * `fresh` reads it now (a sign-in starts only when the provider answers).
   */
  async provider(fresh = false): Promise<client.Configuration> {
    const cached = this.current;
    if (!fresh && cached && Date.now() - cached.at < REDISCOVER_MS) return cached.config;
    this.discovering ??= this.discover().finally(() => {
      this.discovering = null;
    });
    return this.discovering;
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
      this.current = { config, at: Date.now() };
      return config;
    } catch (err) {
      this.current = null;
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
