import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../../src/core/event.js';
import { SYSTEM_SCOPE } from '../../../src/event-store/read-scope.js';
import { REMINE_PAGE } from '../../../src/features/patterns/remine-service.js';
import { TRUE } from '../../../src/filter/ast.js';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';

/**
 * Re-mining (docs/api/patterns.md#re-mining): events stored with the ids of a miner that
 * has changed since (here: their ids and templates replaced by stale ones, as an older
 * miner would have left them) get, for a range, the ids a fresh ingest gives, over more
 * than one page (a page boundary inside a run of events of one time); the templates table
 * follows; progress reaches the total; only administrators may, one job at a time.
 */
describe(`re-mining stored events (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  const T = Math.floor(Date.now() / 1000) - 1800;
  /** 5,200 events, 52 to a second: a page (2,000 or 5,000, REMINE_PAGE) ends inside a second. */
  const N = 5200;
  const PER_SECOND = 52;
  /** The re-mined range leaves out the last two seconds' events. */
  const range = { ts_from: T, ts_to: T + N / PER_SECOND - 2 };
  const inRange = N - 2 * PER_SECOND;
  // The cron lines lie all in the range: their old template goes with them.
  const message = (i: number) =>
    i < 100
      ? `cron job ${i} started`
      : i % 3 === 0
        ? `Invalid user u${i} from 10.0.${i % 250}.${i % 7}`
        : i % 3 === 1
          ? `Accepted password for u${i} from 10.1.${i % 200}.9 port ${2000 + i} ssh2`
          : `session opened for user u${i} by (uid=${i})`;

  /** Every stored event, oldest first, from the store itself. */
  const stored = async (): Promise<StoredEvent[]> =>
    (
      await t.rt.events.execute({
        kind: 'search',
        scope: SYSTEM_SCOPE,
        filter: TRUE,
        range: { fromMs: 0, toMs: Date.now() + 60_000 },
        sort: [
          { field: 'ts', desc: false },
          { field: 'ev_id', desc: false },
        ],
        limit: 10_000,
        offset: 0,
        count: false,
      })
    ).events;
  const post = (token: string, payload: unknown) =>
    t.as(token, { method: 'POST', url: '/api/patterns/remine', payload: payload as object });

  /** The ids ingest gave, by event. */
  let fresh: Map<string, string>;

  beforeAll(async () => {
    t = await createTestApp();
    const lines = Array.from({ length: N }, (_, i) =>
      JSON.stringify({
        app: 'sshd',
        host: 'h1',
        message: message(i),
        timestamp: T + Math.floor(i / PER_SECOND),
      }),
    );
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: lines.join('\n'),
    });
    expect(res.json()).toMatchObject({ accepted: N });
    await t.rt.services.patterns.flush();
    const events = await stored();
    expect(events).toHaveLength(N);
    fresh = new Map(events.map((e) => [e.ev_id, e.pattern_id as string]));
    // What an older miner would have left: other ids on the events and in the table.
    const ids = [...new Set(fresh.values())];
    expect(ids).toHaveLength(4);
    const db = t.rt.meta.db;
    for (const id of ids) {
      const row = await db
        .selectFrom('patterns')
        .selectAll()
        .where('pattern_id', '=', id)
        .executeTakeFirstOrThrow();
      await db.deleteFrom('patterns').where('pattern_id', '=', id).execute();
      await db
        .insertInto('patterns')
        .values({ ...row, pattern_id: `old${id}`, template: `old ${row.template}` })
        .execute();
    }
    await t.rt.events.setPatternIds(
      { fromMs: 0, toMs: Date.now() + 60_000 },
      events.map((e) => [e.ev_id, `old${e.pattern_id}`] as const),
    );
  }, 120_000);
  afterAll(() => t?.close());

  it('refuses others than administrators, bad ranges and a second job while one runs', async () => {
    const u = await t.user('analyst', { permissions: ['manage_tasks'] });
    const denied = await post(u.token, range);
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ detail: expect.stringContaining('administrators') });
    const bad = await Promise.all([
      post(t.adminToken, { ts_from: T, ts_to: T }),
      post(t.adminToken, { ts_from: T + 10, ts_to: T }),
      post(t.adminToken, { ts_from: T }),
      post(t.adminToken, { ts_from: 'yesterday', ts_to: T }),
      post(t.adminToken, { ...range, extra: 1 }),
    ]);
    for (const r of bad) expect(r.statusCode, r.body).toBe(400);
    expect(bad[0]?.json().errors).toHaveProperty('ts_to');
    const unknown = await t.as(t.adminToken, { method: 'GET', url: '/api/patterns/remine/01NOSUCHJOB' });
    expect(unknown.statusCode).toBe(404);
    expect((await t.as(u.token, { method: 'GET', url: '/api/patterns/remine/01NOSUCHJOB' })).statusCode).toBe(
      403,
    );
  });

  it('re-mines the range a page at a time: the ids a fresh ingest gives, progress to the total', async () => {
    const [first, second] = await Promise.all([post(t.adminToken, range), post(t.adminToken, range)]);
    expect(first?.statusCode, first?.body).toBe(202);
    expect(second?.statusCode, second?.body).toBe(409);
    const job = first?.json();
    expect(job).toMatchObject({
      state: 'running',
      ts_from: range.ts_from,
      ts_to: range.ts_to,
      finished: null,
    });
    const end = await eventually<{ state: string; error?: string }>(
      'the re-mine to end',
      async () => {
        const r = await t.as(t.adminToken, { method: 'GET', url: `/api/patterns/remine/${job.job_id}` });
        expect(r.statusCode, r.body).toBe(200);
        return r.json().state === 'running' ? undefined : r.json();
      },
      { withinMs: 60_000, everyMs: 200 },
    );
    expect(end).toMatchObject({
      state: 'done',
      events_done: inRange,
      events_total: inRange,
      events_changed: inRange,
      finished: expect.any(String),
    });
    expect(end.error).toBeUndefined();
    const events = await stored();
    const last = (range.ts_to - T) * PER_SECOND;
    for (const [i, e] of events.entries())
      expect(e.pattern_id, `event ${i}`).toBe(i < last ? fresh.get(e.ev_id) : `old${fresh.get(e.ev_id)}`);
    // The next job may start once this one ended.
    const again = await post(t.adminToken, { ts_from: T, ts_to: T + 1 });
    expect(again.statusCode, again.body).toBe(202);
    await eventually('the second re-mine to end', async () => {
      const r = await t.as(t.adminToken, {
        method: 'GET',
        url: `/api/patterns/remine/${again.json().job_id}`,
      });
      return r.json().state === 'done' ? r.json() : undefined;
    });
  }, 90_000);

  it('keeps the templates table consistent: the new ids shown, the old ones as their events left them', async () => {
    const events = await stored();
    const last = (range.ts_to - T) * PER_SECOND;
    for (const id of new Set(fresh.values())) {
      const mine = events.slice(0, last).filter((e) => e.pattern_id === id);
      const p = await t.as(t.adminToken, { method: 'GET', url: `/api/patterns/${id}` });
      expect(p.statusCode, p.body).toBe(200);
      expect(p.json()).toMatchObject({
        pattern_id: id,
        count: mine.length,
        first_seen: (mine[0]?.ts ?? 0) / 1000,
        last_seen: (mine.at(-1)?.ts ?? 0) / 1000,
      });
      expect(p.json().template).not.toMatch(/^old /);
      // The old id keeps the events outside the range, and its span shrinks to them; one
      // none of whose events is left (cron's) is gone.
      const kept = events.slice(last).filter((e) => e.pattern_id === `old${id}`);
      const old = await t.as(t.adminToken, { method: 'GET', url: `/api/patterns/old${id}` });
      if (!kept.length) {
        expect(p.json().template).toBe('cron job <*> started');
        expect(old.statusCode, old.body).toBe(404);
        expect(
          await t.rt.meta.db
            .selectFrom('patterns')
            .select('pattern_id')
            .where('pattern_id', '=', `old${id}`)
            .execute(),
        ).toEqual([]);
        continue;
      }
      expect(old.statusCode, old.body).toBe(200);
      expect(old.json()).toMatchObject({ count: kept.length, first_seen: range.ts_to });
    }
    const q = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Patterns', params: { time_range: range, n: 10 } },
    });
    expect(q.statusCode, q.body).toBe(200);
    const listed = q.json().results.patterns as Array<{
      pattern_id: string;
      template: string;
      count: number;
    }>;
    expect(new Set(listed.map((p) => p.pattern_id))).toEqual(new Set(fresh.values()));
    expect(listed.reduce((n, p) => n + p.count, 0)).toBe(inRange);
    for (const p of listed) expect(p.template).toMatch(/<\*>/);
  });

  const job = async (id: string) =>
    (await t.as(t.adminToken, { method: 'GET', url: `/api/patterns/remine/${id}` })).json();
  const ended = (id: string) =>
    eventually<{ state: string; events_done: number; events_total: number; error?: string }>(
      'the job to end',
      async () => {
        const j = await job(id);
        return j.state === 'running' ? undefined : j;
      },
      { withinMs: 60_000, everyMs: 100 },
    );

  it('stops a job after its page when asked (DELETE); an ended job is left as it is', async () => {
    const started = await post(t.adminToken, range);
    expect(started.statusCode, started.body).toBe(202);
    const id = started.json().job_id;
    const del = await t.as(t.adminToken, { method: 'DELETE', url: `/api/patterns/remine/${id}` });
    expect(del.statusCode, del.body).toBe(202);
    const end = await ended(id);
    // Every id is current already: the page read changes none.
    const page = REMINE_PAGE[t.rt.events.kind];
    expect(end).toMatchObject({
      state: 'stopped',
      events_done: page,
      events_total: inRange,
      events_changed: 0,
    });
    const again = await t.as(t.adminToken, { method: 'DELETE', url: `/api/patterns/remine/${id}` });
    expect(again.json()).toMatchObject({ state: 'stopped', events_done: page });
    const u = await t.user('analyst2');
    expect((await t.as(u.token, { method: 'DELETE', url: `/api/patterns/remine/${id}` })).statusCode).toBe(
      403,
    );
  }, 90_000);

  it('marks failed ("interrupted") a job its server stopped, and one a process that ended left running', async () => {
    const started = await post(t.adminToken, range);
    expect(started.statusCode, started.body).toBe(202);
    const remine = t.rt.services.patternsRemine;
    await remine.stop();
    expect(await job(started.json().job_id)).toMatchObject({
      state: 'failed',
      error: 'interrupted',
      finished: expect.any(String),
    });
    // A row as a killed server leaves it, its lease still running: a server starting again
    // alone knows nobody runs it; a cluster node cannot know, and waits for the lease.
    const dead = '01KDEADJ0B0000000000000000';
    await t.rt.meta.db
      .insertInto('pattern_remines')
      .values({
        job_id: dead,
        state: 'running',
        ts_from: range.ts_from * 1000,
        ts_to: range.ts_to * 1000,
        events_done: 10,
        events_total: 20,
        events_changed: 1,
        started: new Date().toISOString(),
        finished: null,
        error: null,
        owner: 'a-node-that-died',
        lease_until: Date.now() + 60_000,
        stop_requested: 0,
        started_by: null,
      })
      .execute();
    expect(await job(dead)).toMatchObject({ state: 'running' });
    expect((await post(t.adminToken, range)).statusCode).toBe(409);
    await remine.start();
    if (t.rt.platform.cluster) {
      expect(await job(dead)).toMatchObject({ state: 'running' });
      await t.rt.meta.db
        .updateTable('pattern_remines')
        .set({ lease_until: Date.now() - 1 })
        .where('job_id', '=', dead)
        .execute();
    }
    expect(await job(dead)).toMatchObject({ state: 'failed', error: 'interrupted', events_done: 10 });
  }, 90_000);
});
