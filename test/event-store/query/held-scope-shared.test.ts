import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ClusterTopics, InProcessBus } from '../../../src/core/bus.js';
import { EVERY_EVENT, type ReadScope } from '../../../src/event-store/read-scope.js';
import { cond, TRUE } from '../../../src/filter/builders.js';
import { SqlJobStore } from '../../../src/metadata/query-jobs-repository.js';
import { QueryRunner } from '../../../src/query/runner.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { event, T0 } from '../../helpers/seed.js';

/**
 * Cluster: the state of a query is shared by the nodes, and a widget's query is computed
 * for a read scope (its viewers'), not its owner's. Another node's copy made under another
 * scope (its owner's now, after their rights changed) never shows the shared results: it
 * is computed under its own (issue #54: a held query reads with its reader's rights now).
 */
describe('shared job store: a copy reads under its own scope', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await t.rt.events.append([
      event({ ts: T0, app: 'ops', message: 'ops-secret' }),
      event({ ts: T0 + 1000, app: 'web', message: 'web-public' }),
    ]);
  });
  afterAll(() => t.close());

  it("does not take another scope's results into a copy opened on another node", async () => {
    const bus = new InProcessBus<ClusterTopics>();
    const node = (name: string) =>
      new QueryRunner(t.rt.events, bus, new SqlJobStore(t.rt.meta.db, { node: name, leaseMs: 3000 }), {
        sliceEvents: 1000,
        maxSlices: 4,
        refreshMs: 60_000,
      });
    const [a, b] = [node('a'), node('b')];
    try {
      const owner = await t.rt.meta.db.selectFrom('users').select('id').executeTakeFirstOrThrow();
      const now = new Date().toISOString();
      const row = {
        query_id: 'q-widget',
        owner_id: owner.id,
        type: 'Search',
        params: JSON.stringify({
          time_range: { ts_from: T0 / 1000 - 60, ts_to: T0 / 1000 + 60 },
          query: '',
          sort: ['-ts'],
          page: 1,
          page_size: 50,
        }),
        created_at: now,
        last_used_at: now,
      };
      await t.rt.meta.db.insertInto('queries').values(row).execute();
      // Node A computes it for the viewers who read everything.
      const shared = a.start(row, TRUE, EVERY_EVENT, { scopeFixed: true });
      await a.settle(shared, 5000);
      expect(JSON.stringify(shared.results)).toContain('ops-secret');
      // Node B opens it for its owner, who now reads only web.
      const narrow: ReadScope = { key: 'streams:web-only', filter: cond('app', 'eq', 'web') };
      const copy = await b.open(row, TRUE, narrow);
      await b.settle(copy, 5000);
      expect(copy.status).toBe('SUCCESS');
      expect(JSON.stringify(copy.results)).toContain('web-public');
      expect(JSON.stringify(copy.results)).not.toContain('ops-secret');
      // A's copy, told of B's state, keeps its own scope's results.
      await a.refresh(shared, true);
      expect(JSON.stringify(shared.results)).toContain('ops-secret');
    } finally {
      a.close();
      b.close();
    }
  });
});
