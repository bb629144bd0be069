import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';

interface Row {
  pattern_id: string;
  pattern_ids: string[];
  template: string;
  count: number;
  share: number;
  first_seen: number;
  last_seen: number;
  series: number[];
  samples: Array<{ ev_id: string; ts: number; message: string }>;
  apps: Array<{ app: string; count: number }>;
  apps_other: number;
  new: boolean;
  previous_count: number | null;
}

/**
 * The Patterns query lists one row per template text (docs/api/patterns.md#one-row-per-template):
 * the miner keeps a template per app, so one text from seven apps is seven ids, summed
 * into one row naming its apps; `new` is first seen inside the range (without compare_to)
 * or no event in compare_to's range, for every row alike; a reader of one app sees that
 * app's counts and no other app.
 */
describe(`Patterns grouped by template text (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  const T = Math.floor(Date.now() / 1000) - 900;
  const OLD = T - 2 * 86_400;
  // One text from seven apps, the most events from orders.
  const apps = { orders: 4, billing: 3, shipping: 2, auth: 1, cart: 1, mail: 1, search: 1 };
  const timeout = (app: string, i: number, at: number) => ({
    app,
    host: 'h1',
    message: `Timeout after ${100 + i} ms calling inventory`,
    timestamp: at,
  });
  const reindex = (app: string, i: number, at: number) => ({
    app,
    host: 'h1',
    message: `Reindex of shard ${i} finished`,
    timestamp: at,
  });

  const patterns = async (params: object, token = t.adminToken) => {
    const res = await t.as(token, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Patterns', params: { time_range: { preset: 'last_hour' }, ...params } },
    });
    expect(res.statusCode, res.body).toBe(200);
    return { body: res.body, r: res.json().results as { total: number; patterns: Row[]; other: number } };
  };
  const count = async (query: string, token = t.adminToken) => {
    const res = await t.as(token, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Search', params: { query, time_range: { preset: 'last_hour' }, page_size: 1 } },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results.total as number;
  };

  beforeAll(async () => {
    t = await createTestApp();
    let k = 0;
    const lines: object[] = [];
    for (const [app, n] of Object.entries(apps))
      for (let i = 0; i < n; i++) lines.push(timeout(app, k, T + k++));
    // A second text from two apps, one of which had it two days ago.
    lines.push(reindex('orders', 1, T + 100), reindex('billing', 2, T + 101), reindex('billing', 3, OLD));
    // A third in the range from orders only, and from search ten minutes before the range.
    const cache = (app: string, at: number) => ({
      app,
      host: 'h1',
      message: `Cache flushed for region ${at % 7}`,
      timestamp: at,
    });
    lines.push(cache('orders', T + 200), cache('search', T - 3300));
    const sent = await t.as(t.adminToken, { method: 'POST', url: '/api/ingest', payload: lines });
    expect(sent.statusCode, sent.body).toBe(200);
  });
  afterAll(() => t.close());

  it('lists one row per template text: counts, series and spans summed, every id, the apps named', async () => {
    const { r } = await patterns({});
    expect(r.total).toBe(16);
    expect(r.patterns.map((p) => [p.template, p.count])).toEqual([
      ['Timeout after <*> calling inventory', 13],
      ['Reindex of shard <*> finished', 2],
      ['Cache flushed for region <*>', 1],
    ]);
    const [x] = r.patterns as [Row];
    expect(x.pattern_ids).toHaveLength(7);
    expect(new Set(x.pattern_ids).size).toBe(7);
    expect(x.pattern_ids[0]).toBe(x.pattern_id);
    expect(x.share).toBeCloseTo(13 / 16);
    expect(x.series).toHaveLength(20);
    expect(x.series.reduce((a, b) => a + b, 0)).toBe(13);
    expect(x.first_seen).toBe(T);
    expect(x.last_seen).toBe(T + 12);
    // The newest three over every app.
    expect(x.samples.map((s) => s.ts)).toEqual([T + 12, T + 11, T + 10]);
    expect(x.apps).toEqual([
      { app: 'orders', count: 4 },
      { app: 'billing', count: 3 },
      { app: 'shipping', count: 2 },
      { app: 'auth', count: 1 },
      { app: 'cart', count: 1 },
    ]);
    expect(x.apps_other).toBe(2);
    // The most common id is the orders app's; the term of every id counts the row.
    expect(await count(`app:orders pattern_id:${x.pattern_id}`)).toBe(4);
    expect(await count(`pattern_id:(${x.pattern_ids.join(' OR ')})`)).toBe(13);
    // n counts rows after grouping.
    const one = (await patterns({ n: 1 })).r;
    expect(one.patterns.map((p) => p.count)).toEqual([13]);
    expect(one.other).toBe(3);
  });

  it('lists the same rows through the patterns pipe: one per text, its most common id, count and share', async () => {
    const table = async (query: string) => {
      const res = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/query',
        payload: { type: 'Table', params: { time_range: { preset: 'last_hour' }, query } },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().status, res.json().error).toBe('SUCCESS');
      return res.json().results.rows as Array<[string, string, number, number]>;
    };
    const rows = (p: Row[]) => p.map((x) => [x.pattern_id, x.template, x.count, x.share]);
    const all = (await patterns({})).r.patterns;
    expect(all.map((p) => p.count)).toEqual([13, 2, 1]);
    expect(await table('* | patterns')).toEqual(rows(all));
    // Reindex from orders and billing once each: the lower id stands for the row, in both.
    const two = (await patterns({ query: 'app:(orders OR billing)' })).r.patterns;
    expect(two.map((p) => [p.count, p.pattern_ids.length])).toEqual([
      [7, 2],
      [2, 2],
      [1, 1],
    ]);
    expect(await table('app:(orders OR billing) | patterns')).toEqual(rows(two));
    // Later pipes see the grouped rows: `n`, a where on the count, a sort.
    expect(await table('* | patterns 1')).toEqual(rows(all.slice(0, 1)));
    expect(await table('* | patterns | where count > 1 | sort count')).toEqual(
      rows(all.slice(0, 2)).reverse(),
    );
  });

  it('exports a row’s apps and ids with it', async () => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Patterns', params: { time_range: { preset: 'last_hour' } } },
    });
    const csv = await t.as(t.adminToken, {
      method: 'GET',
      url: `/api/query/${res.json().query_id}/export?ftype=csv`,
    });
    expect(csv.statusCode, csv.body).toBe(200);
    const [head, first] = csv.body.split('\n');
    expect(head).toContain('apps,more apps,pattern ids');
    expect(first).toContain('Timeout after <*> calling inventory');
    expect(first).toContain('{""app"":""orders"",""count"":4}');
  });

  it('marks as new, without compare_to, a text none of whose ids had an event before the range', async () => {
    const { r } = await patterns({});
    const by = new Map(r.patterns.map((p) => [p.template, p]));
    expect(by.get('Timeout after <*> calling inventory')).toMatchObject({ new: true, previous_count: null });
    // The billing id had an event two days ago; the orders id did not: the row is not new.
    const reidx = by.get('Reindex of shard <*> finished') as Row;
    expect(reidx.pattern_ids).toHaveLength(2);
    expect(reidx.new).toBe(false);
    // The same text from another app ten minutes before the range: not new, though that
    // app's id has no event in the range (so not among the row's ids).
    const cache = by.get('Cache flushed for region <*>') as Row;
    expect(cache.pattern_ids).toHaveLength(1);
    expect(cache.apps).toEqual([{ app: 'orders', count: 1 }]);
    expect(cache.new).toBe(false);
    // A query whose events before the range are none (orders only): new again.
    const orders = (await patterns({ query: 'app:orders' })).r;
    for (const p of orders.patterns) expect(p.new, p.template).toBe(true);
  });

  it('marks as new, with compare_to, a text with no event in that range, its count there summed', async () => {
    const earlier = { ts_from: OLD - 60, ts_to: OLD + 60 };
    const { r } = await patterns({ compare_to: earlier });
    const by = new Map(r.patterns.map((p) => [p.template, p]));
    expect(by.get('Timeout after <*> calling inventory')).toMatchObject({ new: true, previous_count: 0 });
    expect(by.get('Reindex of shard <*> finished')).toMatchObject({ new: false, previous_count: 1 });
    // A compare_to range before the old event: both new, whatever came before it.
    const before = (await patterns({ compare_to: { ts_from: OLD - 7200, ts_to: OLD - 3600 } })).r;
    for (const p of before.patterns) expect(p).toMatchObject({ new: true, previous_count: 0 });
  });

  it('gives a reader of one app that app’s counts, ids and samples, and names no other app', async () => {
    const reader = await t.user('orders-reader');
    const team = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/teams',
      payload: { name: 'orders-team', members: [reader.id] },
    });
    const stream = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/streams',
      payload: { title: 'Orders', rule: 'app:orders', readers: { teams: [team.json().id] } },
    });
    expect(stream.statusCode, stream.body).toBe(201);
    const list = await t.as(t.adminToken, { method: 'GET', url: '/api/streams' });
    const def = list.json().results.find((s: { title: string }) => s.title === 'Default');
    const patched = await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/streams/${def.id}`,
      payload: { readers: { teams: [], users: [] } },
    });
    expect(patched.statusCode, patched.body).toBe(200);

    const { r, body } = await patterns({}, reader.token);
    expect(r.total).toBe(6);
    expect(r.patterns.map((p) => [p.template, p.count, p.apps, p.apps_other, p.pattern_ids.length])).toEqual([
      ['Timeout after <*> calling inventory', 4, [{ app: 'orders', count: 4 }], 0, 1],
      ['Cache flushed for region <*>', 1, [{ app: 'orders', count: 1 }], 0, 1],
      ['Reindex of shard <*> finished', 1, [{ app: 'orders', count: 1 }], 0, 1],
    ]);
    for (const other of ['billing', 'shipping', 'auth', 'cart', 'mail', 'search'])
      expect(body, other).not.toContain(other);
    // The billing event two days ago and the search one before the range are not theirs to
    // read: every text is new to them.
    for (const p of r.patterns) expect(p.new, p.template).toBe(true);
    const [x] = r.patterns as [Row];
    expect(await count(`pattern_id:(${x.pattern_ids.join(' OR ')})`, reader.token)).toBe(4);
    expect(x.samples.map((s) => s.message)).toEqual([
      'Timeout after 103 ms calling inventory',
      'Timeout after 102 ms calling inventory',
      'Timeout after 101 ms calling inventory',
    ]);
  });
});
