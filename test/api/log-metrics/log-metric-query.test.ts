import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { errorsSent, twoReaders, type Who } from './two-readers.js';

type Point = { ts: number; events: number; value: number | null } & Record<string, unknown>;
type Series = { labels: Record<string, string>; total: Point; points: Point[] };
type Answer = { series: Series[]; step: number; from: number; to: number; labels: string[] };

/**
 * The query type Metric (docs/api/log-metrics.md "The query type Metric"): a log metric's
 * series through `POST /api/query`, equal to the series route's answer for the same range,
 * answered from the buckets (`answered_from: "rollups"`), in the owner's read scope, with a
 * 400 on `params.<name>` for what it refuses; exported one row a point; a deleted metric
 * ends the query ERROR naming it. And `params.use_rollups` on every type. On the embedded
 * store (ClickHouse does not count yet).
 */
describe.runIf(EVENT_STORE === 'duckdb')(`the query type Metric on ${BACKEND}`, () => {
  let t: TestApp;
  let ada: Who;
  let ben: Who;
  let payments: number;
  let ingest: (events: object[]) => Promise<void>;
  let errors: { id: number };
  // A whole minute, an hour ago: buckets of 60 s from T.
  const T = Math.floor((Date.now() - 3_600_000) / 60_000) * 60_000;
  const iso = (s: number) => new Date(T + s * 1000).toISOString();
  const range = { ts_from: T / 1000, ts_to: T / 1000 + 180 };
  const call = (token: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    t.as(token, { method, url, ...(payload ? { payload } : {}) });
  const query = (token: string, params: object) =>
    call(token, 'POST', '/api/query', { type: 'Metric', params: { time_range: range, ...params } });
  const answer = async (token: string, params: object) => {
    const res = await query(token, params);
    expect(res.statusCode, res.body).toBe(200);
    const q = res.json();
    expect(q, res.body).toMatchObject({
      status: 'SUCCESS',
      type: 'Metric',
      answered_from: 'rollups',
      cold: null,
    });
    return q.results as Answer;
  };
  const byLabel = (s: Series[], label: string) =>
    Object.fromEntries(s.map((x) => [x.labels[label], x.total.events]));
  const refusal = async (token: string, params: object) => {
    const res = await query(token, params);
    expect(res.statusCode, res.body).toBe(400);
    return Object.keys(res.json().errors ?? {});
  };

  beforeAll(async () => {
    ({ t, ada, ben, payments, ingest } = await twoReaders());
    const res = await call(ada.token, 'POST', '/api/log-metrics', {
      name: 'errors_by_app',
      query: 'severity:error',
      labels: ['app'],
      shared_with: { everyone: true },
    });
    expect(res.statusCode, res.body).toBe(201);
    errors = res.json();
    const sent = errorsSent(iso);
    await ingest(sent);
  });
  afterAll(() => t?.close());

  it('answers what the series route answers, from the buckets, each owner summing only the streams they may read', async () => {
    const mine = await answer(ada.token, { metric_id: errors.id });
    const route = await call(
      ada.token,
      'GET',
      `/api/log-metrics/${errors.id}/series?from=${range.ts_from}&to=${range.ts_to}`,
    );
    expect(mine).toEqual(route.json());
    expect(mine).toMatchObject({ step: 60, from: T / 1000, to: T / 1000 + 180, labels: ['app'] });
    expect(byLabel(mine.series, 'app')).toEqual({ payments: 3, web: 2 });
    // Ben may not read Payments: not his to count; naming it is a 400, as for a Search.
    expect(byLabel((await answer(ben.token, { metric_id: errors.id })).series, 'app')).toEqual({ web: 2 });
    expect(await refusal(ben.token, { metric_id: errors.id, streams: [payments] })).toEqual([
      'params.streams',
    ]);
    expect(
      byLabel((await answer(ada.token, { metric_id: errors.id, streams: [payments] })).series, 'app'),
    ).toEqual({
      payments: 3,
    });
    // Steps, labels summed away, a label filter, a limit.
    const coarse = await answer(ada.token, { metric_id: errors.id, step: '3m' });
    expect(coarse.step).toBe(180);
    for (const s of coarse.series) expect(s.points.length).toBe((coarse.to - coarse.from) / 180);
    expect(byLabel(coarse.series, 'app')).toEqual({ payments: 3, web: 2 });
    expect((await answer(ada.token, { metric_id: errors.id, step: 180, labels: [] })).series).toMatchObject([
      { labels: {}, total: { events: 5 } },
    ]);
    const web = await answer(ada.token, { metric_id: errors.id, label_filter: { app: ['web'] } });
    expect(byLabel(web.series, 'app')).toEqual({ web: 2 });
    const top = await answer(ada.token, { metric_id: errors.id, limit: 1 });
    expect(top).toMatchObject({ truncated: true, series: [{ labels: { app: 'payments' } }] });
    // Listed with the other types.
    const types = (await call(ada.token, 'GET', '/api/query/types')).json();
    expect(JSON.stringify(types)).toContain('"Metric"');
  });

  it('refuses what it cannot answer with a 400 naming the parameter, and stores nothing', async () => {
    const before = (await call(ada.token, 'GET', '/api/query')).json();
    const other = await call(ben.token, 'POST', '/api/log-metrics', { name: 'bens_own', query: 'app:web' });
    expect(other.statusCode, other.body).toBe(201);
    const hidden = other.json().id as number;
    // Unknown and invisible metrics alike (existence does not leak).
    expect(await refusal(ada.token, { metric_id: 999_999 })).toEqual(['params.metric_id']);
    expect(await refusal(ada.token, { metric_id: hidden })).toEqual(['params.metric_id']);
    expect(await refusal(ada.token, {})).toEqual(['params.metric_id']);
    expect(await refusal(ada.token, { metric_id: 'seven' })).toEqual(['params.metric_id']);
    expect(await refusal(ada.token, { metric_id: errors.id, query: 'app:web' })).toEqual(['params.query']);
    expect(
      await refusal(ada.token, { metric_id: errors.id, filter: [{ field: 'app', op: 'eq', value: 'web' }] }),
    ).toEqual(['params.filter']);
    expect(await refusal(ada.token, { metric_id: errors.id, step: 90 })).toEqual(['params.step']);
    expect(await refusal(ada.token, { metric_id: errors.id, step: 'soon' })).toEqual(['params.step']);
    expect(await refusal(ada.token, { metric_id: errors.id, labels: ['host'] })).toEqual(['params.labels']);
    expect(await refusal(ada.token, { metric_id: errors.id, label_filter: { host: ['a'] } })).toEqual([
      'params.label_filter.host',
    ]);
    expect(await refusal(ada.token, { metric_id: errors.id, limit: 0 })).toEqual(['params.limit']);
    expect(await refusal(ada.token, { metric_id: errors.id, use_rollups: 'yes' })).toEqual([
      'params.use_rollups',
    ]);
    expect((await call(ada.token, 'GET', '/api/query')).json()).toEqual(before);
  });

  it('exports one row a series’ point; ends ERROR naming the metric once it is deleted', async () => {
    const made = await call(ada.token, 'POST', '/api/log-metrics', {
      name: 'soon_gone',
      query: 'severity:error',
      labels: ['app'],
    });
    const gone = made.json().id as number;
    const sent = [
      { ts: iso(6), app: 'payments', severity: 'error', message: 'card declined' },
      { ts: iso(7), app: 'payments', severity: 'error', message: 'card declined' },
      { ts: iso(66), app: 'payments', severity: 'error', message: 'card declined' },
      { ts: iso(8), app: 'web', severity: 'error', message: 'upstream timed out' },
    ];
    await ingest(sent);
    const res = await query(ada.token, { metric_id: gone, step: 60 });
    expect(res.json().status, res.body).toBe('SUCCESS');
    const id = res.json().query_id as string;
    const csv = await call(ada.token, 'GET', `/api/query/${id}/export?ftype=csv`);
    expect(csv.statusCode, csv.body).toBe(200);
    const lines = csv.body.trim().split(/\r?\n/);
    // Header: time, a column a label, the figures of a count; then 2 series × 3 points.
    expect(lines[0]).toBe('time,app,events,value');
    expect(lines.length).toBe(1 + 2 * 3);
    expect(lines.filter((l) => l.includes(',payments,')).map((l) => l.split(',').slice(2))).toEqual([
      ['2', '2'],
      ['1', '1'],
      ['0', '0'],
    ]);
    expect((await call(ada.token, 'DELETE', `/api/log-metrics/${gone}`)).statusCode).toBe(204);
    const again = await call(ada.token, 'GET', `/api/query/${id}/recalculate`);
    expect(again.statusCode, again.body).toBeLessThan(300);
    await expect
      .poll(async () => (await call(ada.token, 'GET', `/api/query/${id}`)).json(), { timeout: 5_000 })
      .toMatchObject({
        status: 'ERROR',
        error: `The log metric ${gone} this query reads was deleted, or its owner may no longer see it.`,
      });
  });

  it('a metric no longer shared with a query’s owner ends their query ERROR when it is computed again', async () => {
    const made = await call(ada.token, 'POST', '/api/log-metrics', {
      name: 'shared_then_not',
      query: 'severity:error',
      shared_with: { everyone: true },
    });
    const id = made.json().id as number;
    const res = await query(ben.token, { metric_id: id });
    expect(res.json().status, res.body).toBe('SUCCESS');
    const qid = res.json().query_id as string;
    const unshared = await t.as(ada.token, {
      method: 'PATCH',
      url: `/api/log-metrics/${id}`,
      payload: { shared_with: { everyone: false, teams: [] } },
    });
    expect(unshared.statusCode, unshared.body).toBe(200);
    await call(ben.token, 'GET', `/api/query/${qid}/recalculate`);
    await expect
      .poll(async () => (await call(ben.token, 'GET', `/api/query/${qid}`)).json(), { timeout: 5_000 })
      .toMatchObject({
        status: 'ERROR',
        error: `The log metric ${id} this query reads was deleted, or its owner may no longer see it.`,
        results: {},
      });
    // Its owner still reads it.
    expect((await query(ada.token, { metric_id: id })).json().status).toBe('SUCCESS');
  });

  it('takes use_rollups on every type; what answered is said in answered_from', async () => {
    for (const use_rollups of [true, false, undefined]) {
      const res = await call(ada.token, 'POST', '/api/query', {
        type: 'Timeline',
        params: {
          time_range: range,
          query: 'severity:error',
          ...(use_rollups === undefined ? {} : { use_rollups }),
        },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ status: 'SUCCESS', answered_from: 'events' });
    }
  });
});
