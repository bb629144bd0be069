import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';

type Who = { id: number; token: string };
type Job = { id: number; status: string; events: number; progress: number; error: string | null };

/**
 * Backfills (docs/api/log-metrics.md "Backfill"): a metric's past counted from the events
 * stored before it existed, exactly, once, by a background job its owner starts; a reset
 * or a delete ends it; who may not backfill is refused.
 */
describe.runIf(EVENT_STORE === 'duckdb')(`log metrics' backfills on ${BACKEND}`, () => {
  let t: TestApp;
  let ada: Who;
  let ben: Who;
  const HOUR = 3_600_000;
  const now = Math.floor(Date.now() / 60_000) * 60_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  const call = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
    t.as(token, { method, url, ...(payload ? { payload } : {}) });
  const ingest = async (events: object[]) => {
    const res = await call(t.adminToken, 'POST', '/api/ingest', events);
    expect(res.json(), res.body).toMatchObject({ accepted: events.length, rejected: 0 });
  };
  const metric = async (body: object) => {
    const res = await call(ada.token, 'POST', '/api/log-metrics', {
      shared_with: { everyone: true },
      ...body,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number };
  };
  const backfill = async (id: number, from: number, to: number, token = ada.token) =>
    call(token, 'POST', `/api/log-metrics/${id}/backfill`, { from: from / 1000, to: iso(to) });
  const finished = (id: number) =>
    eventually(`backfill ${id} to end`, async () => {
      const job = (await call(ada.token, 'GET', `/api/log-metrics/jobs/${id}`)).json() as Job;
      return job.status !== 'RUNNING' && job;
    });
  const totals = async (id: number, from: number, to: number) => {
    const res = await call(
      ada.token,
      'GET',
      `/api/log-metrics/${id}/series?from=${from / 1000}&to=${to / 1000}`,
    );
    expect(res.statusCode, res.body).toBe(200);
    const series = res.json().series as Array<{ labels: { app: string }; total: { events: number } }>;
    return Object.fromEntries(series.map((s) => [s.labels.app, s.total.events]));
  };

  beforeAll(async () => {
    t = await createTestApp();
    ada = await t.user('ada');
    ben = await t.user('ben');
  });
  afterAll(() => t?.close());

  it('counts the events stored before the metric, once: again it counts nothing, wider only the rest', async () => {
    const line = (app: string, ms: number, severity = 'error') => ({
      ts: iso(ms),
      app,
      severity,
      message: 'x',
    });
    await ingest([
      line('web', now - 3 * HOUR + 1000),
      line('web', now - 2 * HOUR),
      line('db', now - HOUR - 5000),
      line('db', now - HOUR - 4000, 'info'),
      line('web', now - 5 * HOUR), // outside the first backfill
    ]);
    const m = await metric({ name: 'errors_by_app', query: 'severity:error', labels: ['app'] });
    await ingest([line('web', now - 2 * HOUR + 1000), line('db', now - 60_000)]); // counted at ingest
    expect(await totals(m.id, now - 6 * HOUR, now)).toEqual({ web: 1, db: 1 });

    const started = await backfill(m.id, now - 4 * HOUR, now);
    expect(started.statusCode, started.body).toBe(202);
    expect(started.json()).toMatchObject({
      kind: 'backfill',
      metric_id: m.id,
      from: (now - 4 * HOUR) / 1000,
    });
    expect(await finished(started.json().id)).toMatchObject({ status: 'DONE', events: 3, progress: 1 });
    expect(await totals(m.id, now - 6 * HOUR, now)).toEqual({ web: 3, db: 2 });
    const read = (await call(ada.token, 'GET', `/api/log-metrics/${m.id}`)).json();
    expect(read.backfilled).toEqual([{ from: (now - 4 * HOUR) / 1000, to: now / 1000 }]);

    const again = await backfill(m.id, now - 4 * HOUR, now);
    expect(await finished(again.json().id)).toMatchObject({ status: 'DONE', events: 0 });
    const wider = await backfill(m.id, now - 6 * HOUR, now);
    expect(await finished(wider.json().id)).toMatchObject({ status: 'DONE', events: 1 });
    expect(await totals(m.id, now - 6 * HOUR, now)).toEqual({ web: 4, db: 2 });
    expect((await call(ada.token, 'GET', `/api/log-metrics/${m.id}`)).json().backfilled).toEqual([
      { from: (now - 6 * HOUR) / 1000, to: now / 1000 },
    ]);
  });

  it('counts the cold tier’s events as the hot ones’', async () => {
    const DAY = 86_400_000;
    const streams = (await call(t.adminToken, 'GET', '/api/streams')).json().results as Array<{
      id: number;
      builtin: boolean;
    }>;
    const builtin = streams.find((s) => s.builtin)?.id;
    const kept = await call(t.adminToken, 'PATCH', `/api/streams/${builtin}`, { hot_days: 2 });
    expect(kept.statusCode, kept.body).toBe(200);
    const sent = Array.from({ length: 40 }, (_, i) => ({
      ts: iso(now - (i % 2 ? 3 : 1) * DAY - i * 60_000),
      app: 'tiered',
      message: `event ${i}`,
    }));
    await ingest(sent);
    const round = await t.rt.services.coldMoves.run(Date.now());
    expect(round.errors).toEqual([]);
    expect(round.events).toBe(20); // the three-day-old half
    const m = await metric({ name: 'tiered_lines', query: 'app:tiered', labels: ['app'] });
    const job = await backfill(m.id, now - 4 * DAY, now);
    expect(await finished(job.json().id)).toMatchObject({ status: 'DONE', events: 40 });
    expect(await totals(m.id, now - 4 * DAY, now)).toEqual({ tiered: 40 });
  });

  it('refuses bad ranges, a second run, and who may not backfill; a reset ends a running one, a delete removes it', async () => {
    const m = await metric({ name: 'long_backfill', retention_days: 3650 });
    const bad = async (body: object, field: string) => {
      const res = await call(ada.token, 'POST', `/api/log-metrics/${m.id}/backfill`, body);
      expect(res.statusCode, res.body).toBe(400);
      expect(Object.keys(res.json().errors)).toEqual([field]);
    };
    await bad({ to: now / 1000 }, 'from');
    await bad({ from: now / 1000, to: 'tomorrow' }, 'to');
    await bad({ from: now / 1000, to: now / 1000 - 60 }, 'to');
    await bad({ from: now / 1000, to: '9999-12-31T00:00:00Z' }, 'to');
    const short = await metric({ name: 'short_retention', retention_days: 1 });
    const old = await call(ada.token, 'POST', `/api/log-metrics/${short.id}/backfill`, {
      from: (now - 2 * 86_400_000) / 1000,
      to: now / 1000,
    });
    expect(old.statusCode).toBe(400);
    expect(Object.keys(old.json().errors)).toEqual(['from']);

    // Ben sees the metric (shared with everyone) but may not backfill it, nor follow its jobs.
    expect((await backfill(m.id, now - HOUR, now, ben.token)).statusCode).toBe(403);
    const mine = (await call(ben.token, 'POST', '/api/log-metrics', { name: 'bens_own' })).json();
    expect((await backfill(mine.id, now - HOUR, now)).statusCode).toBe(404);

    // Ten years a window at a time: running when the next request comes.
    const long = await backfill(m.id, now - 3600 * 86_400_000, now);
    expect(long.statusCode, long.body).toBe(202);
    const second = await backfill(m.id, now - HOUR, now);
    expect(second.statusCode).toBe(409);
    expect(second.json().code).toBe('backfill_in_progress');
    expect((await call(ben.token, 'GET', `/api/log-metrics/jobs/${long.json().id}`)).statusCode).toBe(404);
    expect(
      (await call(ada.token, 'PATCH', `/api/log-metrics/${m.id}`, { query: 'app:other' })).statusCode,
    ).toBe(200);
    expect(await finished(long.json().id)).toMatchObject({ status: 'ERROR', error: 'the metric was reset' });

    const gone = await backfill(m.id, now - 3600 * 86_400_000, now);
    expect(gone.statusCode).toBe(202);
    expect((await call(ada.token, 'DELETE', `/api/log-metrics/${m.id}`)).statusCode).toBe(204);
    expect((await call(ada.token, 'GET', `/api/log-metrics/jobs/${gone.json().id}`)).statusCode).toBe(404);
  });
});
