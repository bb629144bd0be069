import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClusterTopics, InProcessBus } from '../../../src/core/bus.js';
import { SYSTEM_SCOPE } from '../../../src/event-store/read-scope.js';
import { SqlJobStore } from '../../../src/metadata/query-jobs-repository.js';
import type { JobStore } from '../../../src/query/job-store.js';
import { QueryRunner } from '../../../src/query/runner.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { event, T0 } from '../../helpers/seed.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A node's copy of a query it computes itself, read right after it finished, while its
 * own writes of the partial states are still on their way to the shared store: the read
 * must not take an earlier partial state for news (it did, and a sliced query lost its
 * last slice in cluster mode).
 */
describe("shared job store: a read behind this node's own pending writes", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await t.rt.events.append(
      Array.from({ length: 4000 }, (_, i) => event({ ts: T0 + i * 3600, message: `m ${i}` })),
    );
  });
  afterAll(() => t.close());

  it('keeps the final results of a sliced query read right after SUCCESS', async () => {
    const real = new SqlJobStore(t.rt.meta.db, { node: 'n1', leaseMs: 3000 });
    // Each write is in the store at once but its answer comes back late, as over a
    // loaded network: the store holds a partial state newer than the copy's version.
    const lagging: JobStore = Object.assign(Object.create(real) as JobStore, {
      save: async (...a: Parameters<JobStore['save']>) => {
        const version = await real.save(...a);
        await sleep(40);
        return version;
      },
    });
    const runner = new QueryRunner(t.rt.events, new InProcessBus<ClusterTopics>(), lagging, {
      sliceEvents: 1000,
      maxSlices: 16,
      refreshMs: 60_000,
    });
    try {
      const now = new Date().toISOString();
      const admin = await t.rt.meta.db
        .selectFrom('users')
        .select('id')
        .orderBy('id')
        .executeTakeFirstOrThrow();
      const row = {
        query_id: 'q-lag',
        owner_id: admin.id,
        type: 'Timeline',
        params: JSON.stringify({
          time_range: { ts_from: T0 / 1000, ts_to: T0 / 1000 + 4 * 3600 },
          interval: '1h',
          query: '',
        }),
        created_at: now,
        last_used_at: now,
      };
      await t.rt.meta.db.insertInto('queries').values(row).execute();
      const job = runner.start(row, { kind: 'true' }, SYSTEM_SCOPE);
      await job.running;
      expect(job.status).toBe('SUCCESS');
      expect((await lagging.load(row.query_id, -1))?.version).toBeGreaterThan(0);
      await runner.refresh(job);
      const buckets = (job.results as { buckets: Array<{ count: number }> }).buckets;
      expect(buckets.reduce((n, b) => n + b.count, 0)).toBe(4000);
      expect(job.status).toBe('SUCCESS');
    } finally {
      runner.close();
    }
  });
});
