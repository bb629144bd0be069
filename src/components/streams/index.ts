/** Streams: named rules over events, and who may read them (`/api/streams`). */
import { component } from '../component.js';
import { StreamSchema } from './stream-schema.js';
import { StreamsRepository } from './streams-repository.js';
import { streamRoutes } from './streams-routes.js';
import { StreamsService } from './streams-service.js';
import { streamsMigration } from './streams-table.js';

declare module '../component.js' {
  interface Services {
    streams: StreamsService;
  }
}

export const streams = component({
  name: 'streams',
  migrations: { '0012-streams': streamsMigration },
  build({ meta, events }, { teams }) {
    const streams = new StreamsService(new StreamsRepository(meta.db), teams, events);
    return {
      provides: { streams },
      schemas: [StreamSchema],
      routes: async (app) => void (await app.register(streamRoutes, { streams })),
    };
  },
});
