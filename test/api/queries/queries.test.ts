import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueryJob } from '../../../src/query/job.js';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { event, HOUR, seedWeb, T0 } from '../../helpers/seed.js';

describe(`queries on ${BACKEND}`, () => {
  let t: TestApp;
  let other: { id: number; token: string };
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_QUERY_REFRESH_MS: '100' });
    await seedWeb(t);
    other = await t.user('mallory');
  });
  afterAll(() => t.close());

  const post = (body: object, qs = '', token = t.adminToken) =>
    t.as(token, { method: 'POST', url: `/api/query${qs}`, payload: body });
  const get = (url: string, token = t.adminToken) => t.as(token, { method: 'GET', url });

  it('runs a Search synchronously with total, sort and paging', async () => {
    const res = await post({
      type: 'Search',
      params: { time_range: HOUR, query: 'status:500', page_size: 10 },
    });
    expect(res.statusCode, res.body).toBe(200);
    const q = res.json();
    expect(q).toMatchObject({ status: 'SUCCESS', type: 'Search', owner_id: 1, error: null, progress: 1 });
    expect(q.query_id).toMatch(/^[0-9A-Z]{26}$/);
    expect(q.results.total).toBe(100);
    expect(q.results.events).toHaveLength(10);
    expect(q.results.events[0].status).toBe(500);
    // Newest first by default.
    const times = q.results.events.map((e: { ts: number }) => e.ts);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(times[0]).toBe(T0 / 1000 + 599 * 6); // event 599 is the last 500
    expect(q.params).toMatchObject({ sort: ['-ts'], page: 1, page_size: 10, filter: [] });
    // Re-paging: page 3 and an offset, total unchanged.
    const p3 = (await get(`/api/query/${q.query_id}?page=3&page_size=10`)).json();
    expect(p3.results).toMatchObject({ total: 100, page: 3, page_size: 10, offset: 20 });
    expect(p3.results.events[0].ts).toBe(times[0] - 20 * 36);
    const off = (await get(`/api/query/${q.query_id}?offset=95&page_size=10`)).json();
    expect(off.results.events).toHaveLength(5);
  });

  it('says how the search met the word index: answered by it, or a scan and why (null on ClickHouse)', async () => {
    const index = async (query: string) =>
      (await post({ type: 'Search', params: { time_range: HOUR, query } })).json().index;
    if (EVENT_STORE === 'clickhouse') {
      expect(await index('zirconium')).toBeNull();
      return;
    }
    // A word in no block: the index alone answered.
    expect(await index('zirconium')).toMatchObject({
      path: 'index',
      why: null,
      candidate_blocks: 0,
      ranges: 0,
    });
    // A range of numbers: nothing the index keeps.
    const scan = await index('status:>=500');
    expect(scan).toMatchObject({ path: 'scan', why: 'no_indexed_term', ranges: 0 });
    expect(scan.blocks).toBeGreaterThan(0);
  });

  it('sorts ascending and by other fields, and projects fields', async () => {
    const res = await post({
      type: 'Search',
      params: { time_range: HOUR, sort: ['-bytes'], page_size: 3, fields: ['host', 'http.path'] },
    });
    const q = res.json();
    expect(
      q.results.events.map((e: { ev_id: string; ts: number; host: string }) => Object.keys(e).sort()),
    ).toEqual([
      ['ev_id', 'host', 'http.path', 'ts'],
      ['ev_id', 'host', 'http.path', 'ts'],
      ['ev_id', 'host', 'http.path', 'ts'],
    ]);
    expect(q.results.events[0]['http.path']).toBe('/page/9');
    const asc = (
      await post({ type: 'Search', params: { time_range: HOUR, sort: ['ts'], page_size: 1 } })
    ).json();
    expect(asc.results.events[0].ts).toBe(T0 / 1000);
  });

  it('computes TopN with shares and other', async () => {
    const q = (await post({ type: 'TopN', params: { time_range: HOUR, field: 'status', n: 2 } })).json();
    expect(q.results.total).toBe(600);
    expect(q.results.items).toEqual([
      { value: 200, count: 400, share: 400 / 600 },
      { value: 404, count: 100, share: 100 / 600 },
    ]);
    expect(q.results.other).toBe(100);
    const map = (await post({ type: 'TopN', params: { time_range: HOUR, field: 'http.method' } })).json();
    expect(map.results.items.map((i: { value: string }) => i.value).sort()).toEqual(['GET', 'POST']);
  });

  it('computes LastN newest first', async () => {
    const q = (await post({ type: 'LastN', params: { time_range: HOUR, field: 'host', n: 2 } })).json();
    expect(q.results.items).toHaveLength(2);
    expect(q.results.items[0]).toMatchObject({ value: 'web-3', count: 200 });
    expect(q.results.items[0].last_seen).toBe(T0 / 1000 + 599 * 6);
    expect(q.results.items[0].first_seen).toBe(T0 / 1000 + 2 * 6);
    expect(q.results.items[1].value).toBe('web-2');
  });

  it('computes Summary totals and groups', async () => {
    const q = (
      await post({
        type: 'Summary',
        params: {
          time_range: HOUR,
          group_by: ['host'],
          metrics: [
            { op: 'count' },
            { op: 'sum', field: 'bytes' },
            { op: 'max', field: 'bytes' },
            { op: 'count_distinct', field: 'src_ip' },
          ],
        },
      })
    ).json();
    expect(q.results.totals).toMatchObject({ count: 600, sum_bytes: (599 * 600) / 2, max_bytes: 599 });
    expect(q.results.details).toHaveLength(3);
    expect(q.results.details[0]).toMatchObject({ count: 200 });
    expect(Object.keys(q.results.details[0].group)).toEqual(['host']);
    const plain = (await post({ type: 'Summary', params: { time_range: HOUR } })).json();
    expect(plain.results).toEqual({ totals: { count: 600 }, details: [] });
  });

  it('computes a Timeline with empty buckets filled and split series', async () => {
    const range = { ts_from: T0 / 1000 - 600, ts_to: T0 / 1000 + 600 };
    const q = (await post({ type: 'Timeline', params: { time_range: range, interval: '1m' } })).json();
    expect(q.results.interval).toBe('1m');
    expect(q.results.buckets).toHaveLength(20);
    expect(q.results.buckets[0]).toEqual({ ts: T0 / 1000 - 600, count: 0 });
    expect(q.results.buckets[10]).toEqual({ ts: T0 / 1000, count: 10 });
    const split = (
      await post({ type: 'Timeline', params: { time_range: HOUR, interval: '10m', split_by: 'status' } })
    ).json();
    expect(split.results.buckets).toHaveLength(6);
    expect(split.results.buckets[0].series).toEqual({ '200': 68, '404': 16, '500': 16 });
    const auto = (
      await post({ type: 'Timeline', params: { time_range: { preset: 'last_24_hours' } } })
    ).json();
    expect(auto.results.interval).toBe('1m');
    expect(auto.results.buckets.length).toBeGreaterThanOrEqual(1440);
  });

  it('caps Timeline buckets over a range of centuries: auto coarsens, a too fine interval is a 400', async () => {
    // Issue 29: `auto` fell back to 1d and built 3.65 M buckets (108 MB, seconds) per read.
    const centuries = { ts_from: -5_000_000_000, ts_to: 250_000_000_000 };
    const started = performance.now();
    const res = await post({ type: 'Timeline', params: { time_range: centuries } });
    expect(res.statusCode, res.body).toBe(200);
    const auto = res.json();
    expect(auto.results.buckets.length).toBeLessThanOrEqual(1441);
    expect(auto.results.interval).toMatch(/^\d+d$/);
    expect(performance.now() - started).toBeLessThan(2000);
    const fine = await post({ type: 'Timeline', params: { time_range: centuries, interval: '1d' } });
    expect(fine.statusCode).toBe(400);
    expect(fine.json().errors).toHaveProperty(['params.interval']);
  });

  it('validates without storing', async () => {
    const res = await post({ type: 'TopN', params: { field: 'host' } }, '?validate_only=true');
    expect(res.json()).toEqual({
      valid: true,
      type: 'TopN',
      params: { field: 'host', n: 10, time_range: { preset: 'last_hour' }, filter: [], query: '' },
    });
  });

  it.each([
    [{ type: 'Nope', params: {} }, 'type'],
    [{ type: 'Search', params: { filter: [['host', 'like', 'x']] } }, 'params.filter[0][1]'],
    [
      { type: 'Search', params: { filter: [{ field: 'status', op: 'in', value: 5 }] } },
      'params.filter[0].value',
    ],
    [
      { type: 'Search', params: { filter: [{ field: 'host', op: 'regex', value: '(?=x)' }] } },
      'params.filter[0].value',
    ],
    [{ type: 'Search', params: { time_range: { preset: 'last_fortnight' } } }, 'params.time_range'],
    [{ type: 'Search', params: { time_range: { ts_from: 200, ts_to: 100 } } }, 'params.time_range'],
    [{ type: 'Search', params: { page_size: 10_001 } }, 'params.page_size'],
    [{ type: 'Search', params: { query: 'host:(a OR' } }, 'params.query'],
    [{ type: 'Search', params: { colour: 'red' } }, 'params.colour'],
    [{ type: 'TopN', params: {} }, 'params.field'],
    [{ type: 'Timeline', params: { interval: '7 minutes' } }, 'params.interval'],
    [{ type: 'Summary', params: { metrics: [{ op: 'avg' }] } }, 'params.metrics.0.field'],
    [{ type: 'Summary', params: { metrics: [{ op: 'median', field: 'bytes' }] } }, 'params.metrics.0.op'],
  ])('rejects %j naming %s', async (body, field) => {
    const before = await t.rt.meta.db
      .selectFrom('queries')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    const res = await post(body);
    expect(res.statusCode, res.body).toBe(400);
    expect(Object.keys(res.json().errors ?? {})).toContain(field);
    const after = await t.rt.meta.db
      .selectFrom('queries')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    expect(Number(after?.n)).toBe(Number(before?.n));
  });

  it('names the position of a query-language syntax error', async () => {
    const res = await post({ type: 'Search', params: { query: 'status:500 AND (host:a' } });
    expect(res.json().detail).toMatch(/position \d+/);
  });

  it("keeps queries private: another user's id is 404 everywhere", async () => {
    const q = (await post({ type: 'Search', params: { time_range: HOUR } })).json();
    for (const suffix of ['', '/recalculate', '/stop', '/remove', '/export']) {
      expect((await get(`/api/query/${q.query_id}${suffix}`, other.token)).statusCode, suffix).toBe(404);
    }
    expect((await get('/api/query/01JUNKJUNKJUNKJUNKJUNKJUNK')).statusCode).toBe(404);
    expect((await get(`/api/query/${q.query_id}`)).statusCode).toBe(200);
  });

  it('removes a query, answering with its last state', async () => {
    const q = (await post({ type: 'TopN', params: { time_range: HOUR, field: 'host' } })).json();
    const removed = await get(`/api/query/${q.query_id}/remove`);
    expect(removed.json()).toMatchObject({ query_id: q.query_id, status: 'SUCCESS' });
    expect((await get(`/api/query/${q.query_id}`)).statusCode).toBe(404);
  });

  it('lists the types with their schemas', async () => {
    const types = (await get('/api/query/types')).json();
    expect(types.map((x: { type: string }) => x.type)).toEqual([
      'Search',
      'TopN',
      'LastN',
      'Summary',
      'Timeline',
      'Patterns',
      'Table',
      'Explain',
      'Metric',
    ]);
    expect(types[0].params.properties.page_size.maximum).toBe(10_000);
    const table = types.find((x: { type: string }) => x.type === 'Table');
    expect(Object.keys(table.results.properties)).toEqual(['columns', 'rows', 'total_rows', 'truncated']);
  });

  it('re-evaluates a relative-time query while it is read, status staying SUCCESS', async () => {
    const q = (
      await post({
        type: 'Search',
        params: { time_range: { preset: 'last_5_minutes' }, query: 'relative-probe' },
      })
    ).json();
    expect(q.results.total).toBe(0);
    await t.rt.events.append([event({ ts: Date.now(), message: 'relative-probe arrived' })]);
    const job = t.rt.services.runner.peek(q.query_id) as QueryJob;
    const changed = new Promise<void>((resolve) => {
      const off = t.rt.services.runner.onChange((j) => {
        if (j.id === q.query_id && (j.results as { total: number }).total === 1) {
          off();
          resolve();
        }
      });
    });
    await new Promise((r) => setTimeout(r, 150));
    const during = (await get(`/api/query/${q.query_id}`)).json();
    expect(during.status).toBe('SUCCESS');
    await changed;
    const after = (await get(`/api/query/${q.query_id}`)).json();
    expect(after.status).toBe('SUCCESS');
    expect(after.results.total).toBe(1);
    expect(job.baseMs).toBeGreaterThan(q.base_time * 1000);
  });
});

describe(`the word index's statistics and the read rule on ${BACKEND}`, () => {
  let t: TestApp;
  let bob: { id: number; token: string };
  beforeAll(async () => {
    t = await createTestApp();
    bob = await t.user('bob');
    const call = (method: 'POST' | 'PATCH' | 'GET', url: string, payload?: object) =>
      t.as(t.adminToken, { method, url, ...(payload ? { payload } : {}) });
    // Bob reads the Auth stream alone (the Default stream read by nobody but admins).
    expect(
      (await call('POST', '/api/streams', { title: 'Auth', rule: 'app:sshd', readers: { users: [bob.id] } }))
        .statusCode,
    ).toBe(201);
    const builtin = (await call('GET', '/api/streams'))
      .json()
      .results.find((s: { builtin: boolean }) => s.builtin);
    expect(
      (await call('PATCH', `/api/streams/${builtin.id}`, { readers: { teams: [], users: [] } })).statusCode,
    ).toBe(200);
    await t.rt.events.append([
      event({ ts: T0, app: 'sshd', host: 'h', message: 'Accepted publickey for bob' }),
      event({ ts: T0 + 1000, app: 'nginx', host: 'h', message: 'GET /admin?key=zirconium7c41d09e' }),
    ]);
  });
  afterAll(() => t.close());

  const index = async (token: string, query: string) => {
    const res = await t.as(token, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Search', params: { time_range: HOUR, query } },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  it('tells a reader of some streams nothing of the index: it would tell of words in events they may not read', async () => {
    // The word is in an event of the Default stream, which bob may not read.
    const asBob = await index(bob.token, 'zirconium7c41d09e');
    expect(asBob.results.total).toBe(0);
    expect(asBob.index).toBeNull();
    expect((await index(bob.token, 'molybdenite')).index).toBeNull();
    // An administrator reads every event: the statistics are theirs.
    const asAdmin = await index(t.adminToken, 'zirconium7c41d09e');
    expect(asAdmin.results.total).toBe(1);
    if (EVENT_STORE === 'clickhouse') expect(asAdmin.index).toBeNull();
    else expect(asAdmin.index).toMatchObject({ blocks: 1, candidate_blocks: 1 });
  });
});
