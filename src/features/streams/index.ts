/** Streams: named rules over events, and who may read them (`/api/streams`). */

import type { ReadScopes } from '../../query/read-scopes.js';
import { component } from '../component.js';
import { UsersRepository } from '../identity/index.js';
import { StreamReadScopes } from './read-scopes.js';
import { ReleaseGate } from './release-gate.js';
import { StreamRetention } from './retention.js';
import { StreamMembership } from './stream-membership.js';
import { StreamSchema } from './stream-schema.js';
import { StreamTiers } from './stream-tiers.js';
import { StreamsRepository } from './streams-repository.js';
import { streamRoutes } from './streams-routes.js';
import { StreamsService } from './streams-service.js';
import { streamHotDaysMigration, streamsMigration } from './streams-table.js';

// What other features build over streams (the cold tier's rounds read them as retention does).
export { membership, streamRules } from './membership.js';
export type { Release, ReleaseGate } from './release-gate.js';
export type { StreamRow } from './streams-repository.js';
export { StreamsRepository } from './streams-repository.js';

declare module '../component.js' {
  interface Services {
    streams: StreamsService;
    readScopes: ReadScopes;
    /** Whether data may leave the service now (release-gate.ts): every outbound path asks it. */
    releaseGate: ReleaseGate;
    retention: StreamRetention;
    streamTiers: StreamTiers;
  }
}

export const streams = component({
  name: 'streams',
  migrations: { '0012-streams': streamsMigration, '0025-stream-hot-days': streamHotDaysMigration },
  build({ meta, events, bus, config, log }, { teams }) {
    const repository = new StreamsRepository(meta.db);
    const tiers = new StreamTiers(events, repository);
    const streams = new StreamsService(
      repository,
      teams,
      events,
      () => bus.publish('rights-changed', { keyId: null }),
      { retentionDays: config.retentionDays },
      tiers,
    );
    const users = new UsersRepository(meta.db);
    const readScopes = new StreamReadScopes(repository, teams, users);
    const releaseGate = new ReleaseGate(users, readScopes, events);
    const membership = new StreamMembership(repository, events, log);
    // Streams, teams, users or tokens changed here or on another node.
    // (One token's change, a sign-out say, changes no scope: those keep.)
    bus.subscribe('rights-changed', (m) => {
      if (m.keyId !== null) return;
      readScopes.forget();
      void membership.update();
    });
    const retention = new StreamRetention(events, repository, {
      retentionDays: config.retentionDays,
      retentionMaxBytes: config.retentionMaxBytes,
    });
    const timers: NodeJS.Timeout[] = [];
    return {
      provides: { streams, readScopes, releaseGate, retention, streamTiers: tiers },
      metrics: [retention, membership],
      // Retention runs soon after start, then every retentionIntervalSeconds (each node:
      // a run that finds nothing to delete costs one read of the streams and a count).
      async start() {
        void membership.update();
        const sweep = () => void retention.run().catch(() => undefined);
        timers.push(setTimeout(sweep, 5_000).unref());
        timers.push(setInterval(sweep, config.retentionIntervalSeconds * 1000).unref());
      },
      async stop() {
        for (const t of timers) clearTimeout(t);
      },
      schemas: [StreamSchema],
      routes: async (app) => void (await app.register(streamRoutes, { streams })),
    };
  },
});
