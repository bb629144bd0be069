/** Single sign-on with an OpenID provider, and how one may sign in (`/api/auth/methods`, `/api/auth/oidc/*`). */
import { component } from '../component.js';
import { RelyingParty } from './relying-party.js';
import { signInsMigration } from './sign-ins-table.js';
import { SignOnRepository } from './sign-on-repository.js';
import { signOnRoutes } from './sign-on-routes.js';
import { SignOnService } from './sign-on-service.js';

declare module '../component.js' {
  interface Services {
    signOn: SignOnService | null;
  }
}

export const signOn = component({
  name: 'sign-on',
  migrations: { '0016-sign-ins': signInsMigration },
  build({ meta, config, log, publicUrl }, { tokens }) {
    const settings = config.oidc;
    const rp = settings ? new RelyingParty(settings, log) : null;
    const service =
      rp && settings
        ? new SignOnService(rp, new SignOnRepository(meta.db), tokens, {
            redirectUri: () => `${publicUrl.get()}/api/auth/oidc/callback`,
            sessionMs: config.sessionHours * 3_600_000,
            maxPending: settings.maxPendingSignIns,
            // Every node reads rights and read scopes again (identity.ts publishes it).
            rightsChanged: () => tokens.invalidate(),
          })
        : null;
    return {
      provides: { signOn: service },
      routes: async (app) =>
        void (await app.register(signOnRoutes, {
          signOn: service,
          tokens,
          label: settings?.label ?? null,
          passwordLogin: settings?.passwordLogin ?? true,
          secure: () => publicUrl.get().startsWith('https:'),
          publicUrl: config.publicUrl ? config.publicUrl.replace(/\/+$/, '') : null,
        })),
      // The provider is asked at start; one that does not answer is one warning, never a stop.
      start: async () => void rp?.provider().catch(() => undefined),
    };
  },
});
