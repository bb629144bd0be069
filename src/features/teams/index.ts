/** Teams: groups of users, which streams name as their readers (`/api/teams`). */
import { component } from '../component.js';
import { TeamSchema } from './team-schema.js';
import { TeamsRepository } from './teams-repository.js';
import { teamRoutes } from './teams-routes.js';
import { TeamsService } from './teams-service.js';
import { teamsMigration, teamsProviderSyncedMigration } from './teams-table.js';

// Sharing with teams or everyone (saved searches, log metrics): one rule.
export {
  existingTeams,
  maySee,
  type ShareReader,
  type ShareTables,
  seenBy,
  setTeams,
  sharedWithReader,
  teamsOf,
} from './shares.js';
// What other features take from teams: identity, built before it, reads a user's teams
// with its repository; sign-on's group sync leaves the built-in team alone.
export { TeamsRepository } from './teams-repository.js';
export { EVERYONE } from './teams-table.js';

declare module '../component.js' {
  interface Services {
    teams: TeamsService;
  }
}

export const teams = component({
  name: 'teams',
  migrations: { '0011-teams': teamsMigration, '0020-teams-provider-synced': teamsProviderSyncedMigration },
  build({ meta, bus }) {
    // Every node's read scopes are computed again (streams/read-scopes.ts).
    const teams = new TeamsService(new TeamsRepository(meta.db), () =>
      bus.publish('rights-changed', { keyId: null }),
    );
    return {
      provides: { teams },
      schemas: [TeamSchema],
      routes: async (app) => void (await app.register(teamRoutes, { teams })),
    };
  },
});
