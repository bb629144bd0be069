/** Users and API tokens: who is asking, and what a token may do. */
import type { Config } from '../../config/config.js';
import type { MetadataDb } from '../../metadata/database.js';
import { component } from '../component.js';
import { TeamsRepository } from '../teams/index.js';
import { signOnUsersMigration, usersDisabledMigration, usersMigration } from './identity-table.js';
import { TokensRepository } from './tokens-repository.js';
import { authTokenRoutes } from './tokens-routes.js';
import { TokensService } from './tokens-service.js';
import { AuthTokenSchema, UserSchema } from './user-schema.js';
import { UsersRepository } from './users-repository.js';
import { userRoutes } from './users-routes.js';
import { UsersService } from './users-service.js';

// What other features take from identity: the users' rows (sign-on keeps a provider's users
// in them), their repository (tasks, triggers, streams and reports read users by id), a
// user's identity, and the one wording of a refused sign-in.
export type { NewUserRow, UserRow, UserUpdate } from './identity-table.js';
export { identityOf } from './tokens-service.js';
export { UsersRepository } from './users-repository.js';
export { INVALID_LOGIN } from './users-service.js';

declare module '../component.js' {
  interface Services {
    tokens: TokensService;
    users: UsersService;
  }
}

/** The services over the metadata store alone: what the CLI's user and token commands use too. */
export function identityServices(
  meta: MetadataDb,
  config: Config,
): { tokens: TokensService; users: UsersService } {
  const usersRepo = new UsersRepository(meta.db);
  const tokens = new TokensService(new TokensRepository(meta.db), usersRepo, config.tokenCacheSeconds * 1000);
  return { tokens, users: new UsersService(usersRepo, tokens, new TeamsRepository(meta.db)) };
}

export const identity = component({
  name: 'identity',
  migrations: {
    '0001-initial': usersMigration,
    '0015-sign-on-users': signOnUsersMigration,
    '0018-users-disabled': usersDisabledMigration,
  },
  build({ meta, config, bus }) {
    const { tokens, users } = identityServices(meta, config);
    // What one node changes, every node learns (in one process these stay local).
    tokens.onInvalidate((keyId, elsewhere) => {
      if (!elsewhere) bus.publish('rights-changed', { keyId: keyId ?? null });
    });
    bus.subscribe('rights-changed', (m, remote) => {
      if (remote) tokens.invalidate(m.keyId ?? undefined, true);
    });
    return {
      provides: { tokens, users },
      schemas: [UserSchema, AuthTokenSchema],
      async routes(app) {
        await app.register(authTokenRoutes, { tokens });
        await app.register(userRoutes, {
          users,
          loginFailuresPerUsername: config.loginFailuresPerUsername,
          loginFailuresPerAddress: config.loginFailuresPerAddress,
          sessionHours: config.sessionHours,
          passwordLogin: config.oidc?.passwordLogin ?? true,
        });
      },
    };
  },
});
