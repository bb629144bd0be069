import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { event, HOUR, seedWeb, T0 } from '../../helpers/seed.js';

/**
 * The Table query type (docs/query-language.md#table) over HTTP: each pipe on the web seed (600 events, one
 * every 6 s: hosts web-1..3 in turn, status 200 ×4, 404, 500 per six, bytes = i), the
 * result's shape, and every kind of bad input as a 400 naming the position.
 */
describe(`Table queries (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_QUERY_REFRESH_MS: '100' });
    await seedWeb(t);
  });
  afterAll(() => t.close());

  const post = (type: string, query: string, extra: object = {}) =>
    t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type, params: { time_range: HOUR, query, ...extra } },
    });
  const table = async (query: string) => {
    const res = await post('Table', query);
    expect(res.statusCode, res.body).toBe(200);
    const q = res.json();
    expect(q.status).toBe('SUCCESS');
    return q.results as {
      columns: Array<{ name: string; type: string }>;
      rows: Array<Array<string | number | null>>;
      total_rows: number;
      truncated: boolean;
    };
  };

  it('stats with aliases, by, where, sort and limit, as in the first pipes example of docs/query-language.md', async () => {
    const r = await table(
      'status:>=200 | stats count() as n, p99(bytes), sum(bytes) by host | where n > 10 | sort -n, host | limit 2',
    );
    expect(r.columns).toEqual([
      { name: 'host', type: 'string' },
      { name: 'n', type: 'number' },
      { name: 'p99_bytes', type: 'number' },
      { name: 'sum_bytes', type: 'number' },
    ]);
    // 200 events each; bytes of web-1 are 0, 3, …, 597.
    expect(r.rows.map((row) => row.slice(0, 2))).toEqual([
      ['web-1', 200],
      ['web-2', 200],
    ]);
    expect(r.rows[0]?.[3]).toBe((0 + 597) * 100);
    expect(r).toMatchObject({ total_rows: 2, truncated: false });
  });

  it('top, with and without by', async () => {
    expect((await table('* | top 2 status')).rows).toEqual([
      [200, 400],
      [404, 100],
    ]);
    const by = await table('* | top 1 status by host');
    expect(by.columns.map((c) => c.name)).toEqual(['host', 'status', 'count']);
    expect(by.rows).toEqual([
      ['web-1', 200, 200],
      ['web-2', 200, 100],
      ['web-3', 200, 100],
    ]);
  });

  it('timechart fills the hour in buckets, with series', async () => {
    const r = await table('* | timechart span=10m count() by host');
    expect(r.columns.map((c) => c.name)).toEqual(['_time', 'host', 'count']);
    expect(r.rows).toHaveLength(6 * 3);
    expect(r.rows[0]).toEqual([T0 / 1000, 'web-1', 34]);
    expect(r.rows.reduce((s, row) => s + (row[2] as number), 0)).toBe(600);
  });

  it('extract, rex, eval, rename and fields make and shape columns', async () => {
    const r = await table(
      'status:500 | extract "GET /page/<page> status <code>" | rex "^(?P<verb>[A-Z]+) " | eval kb = bytes / 1024 | rename host as h | fields h, page, code, verb, kb | limit 1',
    );
    expect(r.columns).toEqual([
      { name: 'h', type: 'string' },
      { name: 'page', type: 'string' },
      { name: 'code', type: 'string' },
      { name: 'verb', type: 'string' },
      { name: 'kb', type: 'number' },
    ]);
    // Newest first: event 599 (web-3, /page/9).
    expect(r.rows).toEqual([['web-3', '9', '500', 'GET', 599 / 1024]]);
  });

  it('without aggregating pipes, rows are events with the default columns, newest first', async () => {
    const r = await table('status:404 | limit 3');
    expect(r.columns.map((c) => c.name)).toEqual(['ts', 'host', 'app', 'severity', 'message']);
    expect(r.columns[0]?.type).toBe('time');
    // The newest 404 is event 598.
    expect(r.rows[0]?.[0]).toBe(T0 / 1000 + 598 * 6);
    expect(r.rows).toHaveLength(3);
    const all = await table('');
    expect(all).toMatchObject({ total_rows: 600, truncated: false });
  });

  it('patterns lists templates (the pattern_id column) with their counts', async () => {
    const r = await table('* | patterns 5');
    expect(r.columns.map((c) => c.name)).toEqual(['pattern_id', 'template', 'count', 'share']);
  });

  it('re-evaluates a relative range while it is read, and exports its rows', async () => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: {
        type: 'Table',
        params: { time_range: { preset: 'last_5_minutes' }, query: 'table-probe | stats count() as n' },
      },
    });
    const q = res.json();
    expect(q.results.rows).toEqual([[0]]);
    await t.rt.events.append([event({ ts: Date.now(), message: 'table-probe arrived' })]);
    await expect
      .poll(
        async () =>
          (await t.as(t.adminToken, { method: 'GET', url: `/api/query/${q.query_id}` })).json().results.rows,
        { timeout: 10_000, interval: 150 },
      )
      .toEqual([[1]]);
    const csv = await t.as(t.adminToken, { method: 'GET', url: `/api/query/${q.query_id}/export?ftype=csv` });
    expect(csv.statusCode, csv.body).toBe(200);
    expect(csv.body.trim().split(/\r?\n/)).toEqual(['n', '1']);
  });

  it('a | in a quoted phrase or a regex is text, not a pipe', async () => {
    expect((await table('"a | b" | stats count()')).rows).toEqual([[0]]);
    expect((await table('/status (404|500)/ | stats count()')).rows).toEqual([[200]]);
  });

  it.each([
    ['* | frobnicate', 4, /unknown pipe "frobnicate"/],
    ['* | stats nope(bytes)', 10, /unknown aggregate "nope"/],
    ['* | stats', 4, /"stats" is not complete/],
    ['* | stats count() by host | where bytes > 3', 34, /no column "bytes" here/],
    ['* | extract "no holes here"', 12, /needs at least one hole/],
    ['* | rex "(?P<a>x)\\1"', 9, /backreferences/],
    ['* | limit 10001', 10, /1 to 10,000/],
    ['* | eval x = nofunc(1)', 13, /unknown function "nofunc"/],
    ['* | timechart span=1s count()', -1, /more than 50,000 buckets/],
  ] as const)('%s → 400 with the position', async (query, at, message) => {
    const res = await post('Table', query, at < 0 ? { time_range: { ts_from: 0, ts_to: 86_400 } } : {});
    expect(res.statusCode, res.body).toBe(400);
    const body = res.json();
    expect(body.detail).toMatch(message);
    if (at >= 0) expect(body.detail).toContain(`position ${at} `);
    expect(Object.keys(body.errors)).toEqual(['params.query']);
  });

  it.each(['Search', 'TopN', 'Summary', 'Timeline', 'LastN'])(
    'a pipe in a %s → 400 naming Table',
    async (type) => {
      const res = await post(
        type,
        'status:500 | stats count()',
        type === 'TopN' || type === 'LastN' ? { field: 'host' } : {},
      );
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().detail).toMatch(/query type Table.*position 11 /);
    },
  );
});
