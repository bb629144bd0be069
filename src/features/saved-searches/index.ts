/** Saved searches: a query, its range, streams, columns and sort, shared with teams (`/api/saved-searches`). */
import { component } from '../component.js';
import { SavedSearchSchema } from './saved-search-schema.js';
import { SavedSearchesRepository } from './saved-searches-repository.js';
import { savedSearchRoutes } from './saved-searches-routes.js';
import { SavedSearchesService } from './saved-searches-service.js';
import { savedSearchesMigration } from './saved-searches-table.js';

declare module '../component.js' {
  interface Services {
    savedSearches: SavedSearchesService;
  }
}

export const savedSearches = component({
  name: 'saved-searches',
  migrations: { '0014-saved-searches': savedSearchesMigration },
  build({ meta, config }, { teams }) {
    const searches = new SavedSearchesService(new SavedSearchesRepository(meta.db), teams, {
      perUser: config.savedSearchesPerUser,
      maxBytes: config.savedSearchMaxBytes,
    });
    return {
      provides: { savedSearches: searches },
      schemas: [SavedSearchSchema],
      routes: async (app) => void (await app.register(savedSearchRoutes, { searches })),
    };
  },
});
