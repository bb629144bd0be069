import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { errorsSent, twoReaders, type Who } from './two-readers.js';

type Point = { ts: number; events: number; value: number | null } & Record<string, unknown>;
type Series = { labels: Record<string, string>; total: Point; points: Point[] };

/**
 * Log metrics counted at ingest and read as series (docs/api/log-metrics.md): events sent
 * through the intake after a metric exists count in their buckets, by label, exactly; every
 * reader sums only the streams they may read; a reset starts again. On the embedded store
 * (ClickHouse does not count yet: a 409 says so).
 */
describe.runIf(EVENT_STORE === 'duckdb')(`log metrics' series on ${BACKEND}`, () => {
  let t: TestApp;
  let ada: Who;
  let ben: Who;
  let payments: number;
  let ingest: (events: object[]) => Promise<void>;
  // A whole minute, an hour ago: buckets of 60 s from T.
  const T = Math.floor((Date.now() - 3_600_000) / 60_000) * 60_000;
  const iso = (s: number) => new Date(T + s * 1000).toISOString();
  const call = (token: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    t.as(token, { method, url, ...(payload ? { payload } : {}) });
  const metric = async (body: object) => {
    const res = await call(ada.token, 'POST', '/api/log-metrics', {
      shared_with: { everyone: true },
      ...body,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; counting_since: string; series_count: number };
  };
  const series = async (token: string, id: number, qs = '') => {
    const res = await call(
      token,
      'GET',
      `/api/log-metrics/${id}/series?from=${T / 1000}&to=${T / 1000 + 180}${qs}`,
    );
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { series: Series[]; step: number; from: number; to: number; labels: string[] };
  };
  const byLabel = (s: Series[], label: string) =>
    Object.fromEntries(s.map((x) => [x.labels[label], x.total.events]));

  beforeAll(async () => {
    ({ t, ada, ben, payments, ingest } = await twoReaders());
  });
  afterAll(() => t?.close());

  it('counts the events sent after it exists, by bucket and label; each reader sums only the streams they may read', async () => {
    await ingest([{ ts: iso(1), app: 'web', severity: 'error', message: 'before the metric' }]);
    const errors = await metric({ name: 'errors_by_app', query: 'severity:error', labels: ['app'] });
    await ingest(errorsSent(iso));
    const mine = await series(ada.token, errors.id);
    expect(mine).toMatchObject({ step: 60, from: T / 1000, to: T / 1000 + 180, labels: ['app'] });
    // The event stored before the metric is not counted (only a backfill would).
    expect(byLabel(mine.series, 'app')).toEqual({ payments: 3, web: 2 });
    const pay = mine.series.find((s) => s.labels.app === 'payments') as Series;
    expect(pay.points.map((p) => [p.ts, p.events, p.value])).toEqual([
      [T / 1000, 2, 2],
      [T / 1000 + 60, 1, 1],
      [T / 1000 + 120, 0, 0],
    ]);
    // Ben may not read Payments: its events are not his to count.
    expect(byLabel((await series(ben.token, errors.id)).series, 'app')).toEqual({ web: 2 });
    expect(
      (await call(ben.token, 'GET', `/api/log-metrics/${errors.id}/series?streams=${payments}`)).json(),
    ).toMatchObject({ errors: { streams: [expect.any(String)] } });
    expect(byLabel((await series(ada.token, errors.id, `&streams=${payments}`)).series, 'app')).toEqual({
      payments: 3,
    });
    // Labels summed away; a label filter; the metric's series count.
    const one = await series(ada.token, errors.id, '&labels=');
    expect(one.series.map((s) => [s.labels, s.total.events])).toEqual([[{}, 5]]);
    expect(byLabel((await series(ada.token, errors.id, '&label.app=web')).series, 'app')).toEqual({ web: 2 });
    expect((await call(ada.token, 'GET', `/api/log-metrics/${errors.id}`)).json().series_count).toBe(2);
    // The events deleted (a short retention): the metric answers as before.
    await t.rt.events.deleteOlderThan(Date.now() + 60_000);
    expect(byLabel((await series(ada.token, errors.id)).series, 'app')).toEqual({ payments: 3, web: 2 });
  });

  it('aggregates a field’s numbers (JSON numbers only): sum, avg, min, max and quantiles within 1 %', async () => {
    const latency = await metric({
      name: 'latency_ms',
      kind: 'quantiles',
      field: 'ms',
      quantiles: [0.5, 0.99],
    });
    const avg = await metric({ name: 'avg_ms', kind: 'avg', field: 'ms', query: 'app:api' });
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    await ingest([
      ...values.map((ms, i) => ({ ts: iso(10 + (i % 40)), app: 'api', ms, message: `GET /x took ${ms}` })),
      { ts: iso(11), app: 'api', ms: '7000', message: 'numeric text is no number' },
    ]);
    const q = (await series(ada.token, latency.id)).series[0] as Series;
    expect(q.total).toMatchObject({ events: 101, count: 100, sum: 5050, min: 1, max: 100 });
    const quantiles = q.total.quantiles as Record<string, number>;
    expect(Math.abs((quantiles['0.5'] as number) - 50) / 50).toBeLessThanOrEqual(0.0101);
    expect(Math.abs((quantiles['0.99'] as number) - 99) / 99).toBeLessThanOrEqual(0.0202);
    expect(q.total.value).toBe(quantiles['0.5']);
    const a = (await series(ada.token, avg.id)).series[0] as Series;
    expect(a.total).toMatchObject({ events: 101, count: 100, avg: 50.5, value: 50.5 });
    // An empty step: no figures but the events.
    expect(a.points[2]).toMatchObject({ events: 0, count: 0, sum: 0, avg: null, min: null, value: null });
  });

  it('a metric whose stored query can no longer be read counts nothing and keeps what it counted', async () => {
    const broken = await metric({ name: 'broken_later', query: 'app:legacy' });
    await ingest([{ ts: iso(40), app: 'legacy', message: 'counted' }]);
    expect((await series(ada.token, broken.id)).series[0]?.total.events).toBe(1);
    // As a query an older version wrote and this one cannot parse (a grammar change).
    await t.rt.meta.db
      .updateTable('log_metrics')
      .set({ query: 'app:(' })
      .where('id', '=', broken.id)
      .execute();
    await metric({ name: 'another_one' }); // gives the store the metrics again
    await ingest([{ ts: iso(41), app: 'legacy', message: 'not counted' }]);
    expect((await series(ada.token, broken.id)).series[0]?.total.events).toBe(1);
  });

  it('a change of what is counted resets it; bad parameters are 400s naming them', async () => {
    const m = await metric({ name: 'resets', query: 'app:web' });
    await ingest([{ ts: iso(20), app: 'web', message: 'counted once' }]);
    expect((await series(ada.token, m.id)).series[0]?.total.events).toBe(1);
    const changed = await call(ada.token, 'PATCH', `/api/log-metrics/${m.id}`, { query: 'app:other' });
    expect(changed.json().counting_since).not.toBe(m.counting_since);
    expect((await series(ada.token, m.id)).series).toEqual([]);
    const bad = async (qs: string, field: string) => {
      const res = await call(ada.token, 'GET', `/api/log-metrics/${m.id}/series?${qs}`);
      expect(res.statusCode, `${qs}: ${res.body}`).toBe(400);
      expect(Object.keys(res.json().errors), qs).toEqual([field]);
    };
    await bad('step=90', 'step');
    await bad('step=soon', 'step');
    await bad('from=2026-13-01', 'from');
    await bad(`from=${T / 1000 + 60}&to=${T / 1000}`, 'from');
    await bad('labels=host', 'labels');
    await bad('label.host=a', 'label.host');
    await bad('from=0&to=4000000000&step=60', 'step');
    await bad('streams=x', 'streams');
    expect((await call(ben.token, 'GET', '/api/log-metrics/999999/series')).statusCode).toBe(404);
    // Bounded work: 200 series of 11,000 points (2.2 million figures) is refused on `limit`;
    // 100 of them is an answer.
    const hosts = await metric({ name: 'by_host', labels: ['host'] });
    await ingest(Array.from({ length: 200 }, (_, i) => ({ ts: iso(30), host: `h${i}`, message: 'x' })));
    const wide = `from=${T / 1000 - 10_999 * 60}&to=${T / 1000 + 60}&step=60`;
    const refused = await call(ada.token, 'GET', `/api/log-metrics/${hosts.id}/series?${wide}&limit=200`);
    expect(refused.statusCode, refused.body).toBe(400);
    expect(Object.keys(refused.json().errors)).toEqual(['limit']);
    const fine = await call(ada.token, 'GET', `/api/log-metrics/${hosts.id}/series?${wide}&limit=100`);
    expect(fine.statusCode).toBe(200);
    expect(fine.json().series).toHaveLength(100);
    expect(fine.json().truncated).toBe(true);
  });
});
