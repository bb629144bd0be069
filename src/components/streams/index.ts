/** Streams: named rules over events, and who may read them (`/api/streams`). */
import type { ReadScopes } from '../../domain/auth/read-scopes.js';
import { UsersRepository } from '../../metadata/users-repository.js';
import { component } from '../component.js';
import { StreamReadScopes } from './read-scopes.js';
import { StreamSchema } from './stream-schema.js';
import { StreamsRepository } from './streams-repository.js';
import { streamRoutes } from './streams-routes.js';
import { StreamsService } from './streams-service.js';
import { streamsMigration } from './streams-table.js';

declare module '../component.js' {
  interface Services {
    streams: StreamsService;
    readScopes: ReadScopes;
  }
}

export const streams = component({
  name: 'streams',
  migrations: { '0012-streams': streamsMigration },
  build({ meta, events, bus }, { teams }) {
    const repository = new StreamsRepository(meta.db);
    const streams = new StreamsService(repository, teams, events, () =>
      bus.publish('rights-changed', { keyId: null }),
    );
    const readScopes = new StreamReadScopes(repository, teams, new UsersRepository(meta.db));
    // Streams, teams, users or tokens changed here or on another node.
    bus.subscribe('rights-changed', () => readScopes.forget());
    return {
      provides: { streams, readScopes },
      schemas: [StreamSchema],
      routes: async (app) => void (await app.register(streamRoutes, { streams })),
    };
  },
});
