/** The cold tier (ADR 0031): the mover's rounds, `/api/cold/*` and the tiers' figures. */

import { component } from '../component.js';
import { StreamsRepository } from '../streams/index.js';
import { ColdJobs } from './cold-jobs.js';
import { ColdMoves } from './cold-mover.js';
import { coldOpsRoutes } from './cold-ops-routes.js';
import { ColdImportJobSchema, ColdVerifyJobSchema } from './cold-ops-schema.js';
import { coldRoutes } from './cold-routes.js';
import { ColdFileSchema } from './cold-schema.js';
import { ColdService } from './cold-service.js';

export { coldFilesReadable } from './cold-service.js';

declare module '../component.js' {
  interface Services {
    coldMoves: ColdMoves;
  }
}

export const cold = component({
  name: 'cold',
  build({ meta, events, config, log }, { streamTiers }) {
    const moves = new ColdMoves(events, new StreamsRepository(meta.db), log);
    const service = new ColdService(events);
    const jobs = new ColdJobs(events, new StreamsRepository(meta.db));
    const timers: NodeJS.Timeout[] = [];
    // One round at a time; a stop waits for the one under way (the store closes after it).
    let inFlight: Promise<void> | null = null;
    return {
      provides: { coldMoves: moves },
      metrics: [moves, service],
      // The mover runs soon after start, then every tierIntervalSeconds (the embedded store
      // only: a store without a cold tier answers each call with null at no cost).
      async start() {
        // Each round, then the streams' tier figures as of it.
        const round = () => {
          if (inFlight) return;
          inFlight = moves
            .run()
            .then(() => streamTiers.refresh())
            .catch((err) => log.warn({ err }, 'cold tier: a round failed'))
            .finally(() => {
              inFlight = null;
            });
        };
        timers.push(setTimeout(round, 10_000).unref());
        timers.push(setInterval(round, config.tierIntervalSeconds * 1000).unref());
      },
      async stop() {
        for (const t of timers) clearTimeout(t);
        await inFlight;
      },
      schemas: [ColdFileSchema, ColdVerifyJobSchema, ColdImportJobSchema],
      routes: async (app) => {
        await app.register(coldRoutes, { cold: service });
        await app.register(coldOpsRoutes, { jobs });
      },
    };
  },
});
