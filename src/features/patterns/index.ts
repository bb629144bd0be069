/** Patterns: every event's message template, mined at ingest (`/api/patterns`). */
import { LeasesRepository } from '../../metadata/leases-repository.js';
import { component } from '../component.js';
import { PatternsRepository } from './patterns-repository.js';
import { PatternSchema, patternRoutes } from './patterns-routes.js';
import { PatternsService } from './patterns-service.js';
import { patternsMigration } from './patterns-table.js';
import { RemineRepository } from './remine-repository.js';
import { remineRoutes } from './remine-routes.js';
import { RemineJobSchema } from './remine-schema.js';
import { RemineService } from './remine-service.js';
import { remineMigration } from './remine-table.js';

// What queries takes from patterns: the event store whose answers carry templates' text.
export { withTemplates } from './with-templates.js';

declare module '../component.js' {
  interface Services {
    patterns: PatternsService;
    patternsRemine: RemineService;
  }
}

export const patterns = component({
  name: 'patterns',
  migrations: { '0017-patterns': patternsMigration, '0021-pattern-remines': remineMigration },
  build({ meta, events, config, log, bus, cluster, node }, { readScopes }) {
    const patterns = new PatternsService(
      new PatternsRepository(meta.db),
      events,
      readScopes,
      log,
      config.patternMining,
      // A cluster node tells the others what it made; alone, nobody listens.
      cluster ? (templates, merged) => bus.publish('patterns-made', { templates, merged }) : undefined,
    );
    bus.subscribe('patterns-made', (m, remote) => {
      if (remote) patterns.receive(m.templates, m.merged);
    });
    const remine = new RemineService(
      new RemineRepository(meta.db),
      new LeasesRepository(meta.db),
      events,
      patterns,
      log,
      { node, cluster },
    );
    return {
      provides: { patterns, patternsRemine: remine },
      schemas: [PatternSchema, RemineJobSchema],
      routes: async (app) => {
        await app.register(remineRoutes, { remine });
        await app.register(patternRoutes, { patterns });
      },
      start: async () => {
        await patterns.start();
        await remine.start();
      },
      stop: async () => {
        await remine.stop();
        await patterns.stop();
      },
    };
  },
});
