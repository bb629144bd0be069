import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ClusterTopics, InProcessBus } from '../../../src/core/bus.js';
import { DuckDbEventStore } from '../../../src/event-store/duckdb/duckdb-event-store.js';
import type { EventStore } from '../../../src/event-store/event-store.js';
import type { SearchResult } from '../../../src/event-store/query-plan.js';
import { SYSTEM_SCOPE } from '../../../src/event-store/read-scope.js';
import { COMPONENTS } from '../../../src/features/index.js';
import { migrationsOf } from '../../../src/features/root.js';
import { type MetadataDb, openMetadataDb } from '../../../src/metadata/database.js';
import { SqlJobStore } from '../../../src/metadata/query-jobs-repository.js';
import type { JobDefinition } from '../../../src/query/job.js';
import { MemoryJobStore } from '../../../src/query/job-store.js';
import { QueryRunner } from '../../../src/query/runner.js';
import { validateQuery } from '../../../src/query/validate.js';
import { event, T0 } from '../../helpers/seed.js';

/**
 * The query runner on a fake clock over a real (in-memory DuckDB) event store: a
 * relative-time query read again is re-evaluated once `refreshMs` have passed since its
 * last evaluation, never sooner; in a cluster, a computation's lease is renewed while it
 * runs and another node takes the work over only once it has lapsed.
 */
const FAKE: Parameters<typeof vi.useFakeTimers>[0] = {
  toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'],
};
const OPTS = { sliceEvents: 1_000_000, maxSlices: 1, refreshMs: 10_000 };

function searchRow(id: string, ownerId: number, timeRange: object): JobDefinition {
  const q = validateQuery({ type: 'Search', params: { time_range: timeRange } });
  const row = {
    query_id: id,
    owner_id: ownerId,
    type: q.type,
    params: JSON.stringify(q.params),
    created_at: new Date().toISOString(),
  };
  return { row, filter: q.filter, scope: SYSTEM_SCOPE };
}

const totalOf = (results: unknown) => (results as SearchResult).total;

let store: DuckDbEventStore;
beforeAll(async () => {
  store = await DuckDbEventStore.open({
    dataDir: ':memory:',
    memoryLimit: '256MB',
    checkpointThreshold: '16MB',
  });
});
afterAll(() => store.close());
afterEach(() => {
  vi.useRealTimers();
});

describe('query runner: re-evaluation of relative queries every refreshMs', () => {
  let runner: QueryRunner;
  beforeEach(() => {
    vi.useFakeTimers({ ...FAKE, now: T0 });
    runner = new QueryRunner(store, new InProcessBus<ClusterTopics>(), new MemoryJobStore(), OPTS);
  });
  afterEach(() => runner.close());

  it('re-evaluates on a read only once refreshMs have passed, with the window moved to now', async () => {
    await store.append([event({ ts: T0 - 60_000 }), event({ ts: T0 - 30_000 })]);
    const { row, filter } = searchRow('q-live', 1, { preset: 'last_hour' });
    const changes: number[] = [];
    runner.onChange((j) => {
      if (j.id === 'q-live' && j.status === 'SUCCESS') changes.push(totalOf(j.results));
    });
    const job = runner.start(row, filter, SYSTEM_SCOPE);
    await job.running;
    expect(job.status).toBe('SUCCESS');
    expect(totalOf(job.results)).toBe(2);
    expect(job.baseMs).toBe(T0);

    await store.append([event({ ts: T0 + 5_000 })]);
    await vi.advanceTimersByTimeAsync(9_999);
    runner.touch(job);
    expect(job.running).toBeNull(); // not due yet: the read serves the last results
    expect(totalOf(job.results)).toBe(2);

    await vi.advanceTimersByTimeAsync(1);
    runner.touch(job);
    expect(job.running).not.toBeNull();
    await job.running;
    expect(totalOf(job.results)).toBe(3);
    expect(job.baseMs).toBe(T0 + 10_000);
    expect(job.window.toMs).toBe(T0 + 10_001);
    expect(changes).toEqual([2, 3]);

    // Due again only refreshMs after this evaluation; an unchanged result tells nobody.
    runner.touch(job);
    expect(job.running).toBeNull();
    await vi.advanceTimersByTimeAsync(10_000);
    runner.touch(job);
    await job.running;
    expect(job.baseMs).toBe(T0 + 20_000);
    expect(changes).toEqual([2, 3]);
  });

  it('never re-evaluates an absolute range or a stopped query, however long ago', async () => {
    const absolute = searchRow('q-abs', 1, { ts_from: (T0 - 3_600_000) / 1000, ts_to: T0 / 1000 });
    const relative = searchRow('q-stopped', 1, { preset: 'last_hour' });
    const a = runner.start(absolute.row, absolute.filter, SYSTEM_SCOPE);
    const r = runner.start(relative.row, relative.filter, SYSTEM_SCOPE);
    await Promise.all([a.running, r.running]);
    await runner.stop(r);
    await vi.advanceTimersByTimeAsync(60_000);
    runner.touch(a);
    runner.touch(r);
    expect(a.running).toBeNull();
    expect(r.running).toBeNull();
    expect(a.baseMs).toBe(T0);
    expect(r.baseMs).toBe(T0);
  });
});

describe('query runner: leases in a shared job store', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'logscope-runner-clock-'));
  let meta: MetadataDb;
  let ownerId: number;
  const runners: QueryRunner[] = [];
  const node = (name: string, events: EventStore = store) => {
    const jobs = new SqlJobStore(meta.db, { node: name, leaseMs: 3000 });
    const runner = new QueryRunner(events, new InProcessBus<ClusterTopics>(), jobs, {
      ...OPTS,
      leaseMs: 3000,
    });
    runners.push(runner);
    return { jobs, runner };
  };
  /** A stored query definition (query_jobs rows reference it). */
  const define = async (id: string) => {
    const q = searchRow(id, ownerId, { preset: 'last_hour' });
    await meta.db
      .insertInto('queries')
      .values({ ...q.row, last_used_at: q.row.created_at })
      .execute();
    return q;
  };

  beforeAll(async () => {
    meta = await openMetadataDb({ databaseUrl: '', dataDir: dir, migrations: migrationsOf(COMPONENTS) });
    const user = await meta.db
      .insertInto('users')
      .values({
        username: 'clock',
        password_hash: null,
        is_admin: 1,
        permissions: '[]',
        created_at: new Date().toISOString(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    ownerId = user.id;
  });
  afterAll(async () => {
    await meta.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    vi.useFakeTimers({ ...FAKE, now: T0 });
  });
  afterEach(() => {
    for (const r of runners.splice(0)) r.close();
  });

  it("takes over a dead node's unfinished query only once its lease has lapsed", async () => {
    const q = await define('q-orphan');
    const dead = new SqlJobStore(meta.db, { node: 'dead', leaseMs: 3000 });
    expect(await dead.claim('q-orphan', false)).toEqual({ stopRequested: false });
    const b = node('b');
    const definition = async (id: string) => (id === 'q-orphan' ? q : null);

    await vi.advanceTimersByTimeAsync(2_999);
    expect(await b.runner.adopt(definition)).toBe(0);
    expect(b.runner.peek('q-orphan')).toBeUndefined();

    await vi.advanceTimersByTimeAsync(2);
    expect(await b.runner.adopt(definition)).toBe(1);
    const job = b.runner.peek('q-orphan');
    await job?.running;
    expect(job?.status).toBe('SUCCESS');
    await job?.serial;
    const stored = await b.jobs.load('q-orphan', -1);
    expect(stored?.state?.status).toBe('SUCCESS');
    expect(stored?.leased).toBe(false); // the final write gave the lease up
    expect(await b.runner.adopt(definition)).toBe(0); // nothing left to take
  });

  it('renews the lease of a running computation every third of leaseMs, until the node closes', async () => {
    const q = await define('q-long');
    // Node a's engine answers only when the test says so: its computation runs meanwhile.
    let entered!: () => void;
    const reached = new Promise<void>((r) => {
      entered = r;
    });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slow: EventStore = Object.assign(Object.create(store) as EventStore, {
      estimateInRange: store.estimateInRange.bind(store),
      execute: (async (plan, opts) => {
        entered();
        await gate;
        return store.execute(plan, opts);
      }) as EventStore['execute'],
    });
    const a = node('a', slow);
    const b = node('b');
    const definition = async (id: string) => (id === 'q-long' ? q : null);
    const job = a.runner.start(q.row, q.filter, SYSTEM_SCOPE);
    await reached;
    expect(job.status).toBe('IN_PROGRESS');

    // Well past the first lease's end: renewed at 1 s, 2 s, ... so still a's.
    await vi.advanceTimersByTimeAsync(5_000);
    expect((await b.jobs.load('q-long', -1))?.leased).toBe(true);
    expect(await b.runner.adopt(definition)).toBe(0);

    // a stops renewing (closing, as a node that dies): the lease lapses and b takes over.
    a.runner.close();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await b.runner.adopt(definition)).toBe(0); // renewed at 5 s: runs to 8 s
    await vi.advanceTimersByTimeAsync(1_001);
    expect(await b.runner.adopt(definition)).toBe(1);
    const taken = b.runner.peek('q-long');
    await taken?.running;
    expect(taken?.status).toBe('SUCCESS');

    release();
    await job.running;
  });
});
