/** Patterns: every event's message template, mined at ingest (`/api/patterns`). */
import { component } from '../component.js';
import { PatternsRepository } from './patterns-repository.js';
import { PatternSchema, patternRoutes } from './patterns-routes.js';
import { PatternsService } from './patterns-service.js';
import { patternsMigration } from './patterns-table.js';

// What queries takes from patterns: the event store whose answers carry templates' text.
export { withTemplates } from './with-templates.js';

declare module '../component.js' {
  interface Services {
    patterns: PatternsService;
  }
}

export const patterns = component({
  name: 'patterns',
  migrations: { '0017-patterns': patternsMigration },
  build({ meta, events, config, log, bus, cluster }, { readScopes }) {
    const patterns = new PatternsService(
      new PatternsRepository(meta.db),
      events,
      readScopes,
      log,
      config.patternMining,
      // A cluster node tells the others what it made; alone, nobody listens.
      cluster ? (templates) => bus.publish('patterns-made', { templates }) : undefined,
    );
    bus.subscribe('patterns-made', (m, remote) => {
      if (remote) patterns.receive(m.templates);
    });
    return {
      provides: { patterns },
      schemas: [PatternSchema],
      routes: async (app) => void (await app.register(patternRoutes, { patterns })),
      start: () => patterns.start(),
      stop: () => patterns.stop(),
    };
  },
});
