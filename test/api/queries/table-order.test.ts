import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';

/**
 * The Table query type (docs/query-language.md#table): `sort` orders text that reads as a number (a JSON number
 * kept in `fields`) as that number, numbers before other text, as a Search sorts an extra
 * field, whether the column is an event's field or one a pipe made.
 */
describe(`Table: sort orders numbers as numbers (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  const now = Math.floor(Date.now() / 1000);
  const range = { ts_from: now - 3600, ts_to: now + 60 };

  beforeAll(async () => {
    t = await createTestApp();
    // seq is a JSON number in 120 records, text in three, absent in one.
    const records: object[] = Array.from({ length: 120 }, (_, i) => ({
      message: `record ${i}`,
      host: 'h',
      seq: i,
      group: i % 3,
    }));
    records.push(
      { message: 'text b', host: 'h', seq: 'b', group: 'x' },
      { message: 'text a', host: 'h', seq: 'a', group: 'x' },
      { message: 'decimal', host: 'h', seq: 2.5, group: 'x' },
      { message: 'none', host: 'h' },
      ...[10, 10, 9, 9, 'z', 'z'].map((code) => ({ message: 'coded', host: 'k', code })),
      ...[9, 10, 11, 12, 13, 14].map((code) => ({ message: 'series', host: 'm', code })),
    );
    const res = await t.as(t.adminToken, { method: 'POST', url: '/api/ingest', payload: records });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().accepted).toBe(136);
  });
  afterAll(() => t.close());

  const post = (query: string) =>
    t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Table', params: { time_range: range, query } },
    });
  const rows = async (query: string) => {
    const res = await post(query);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe('SUCCESS');
    return res.json().results.rows as Array<Array<string | number | null>>;
  };
  const column = async (query: string) => (await rows(query)).map((r) => r[0]);

  it('sorts a field holding JSON numbers numerically, not as text', async () => {
    expect(await column('host:h | sort seq | fields seq | limit 5')).toEqual(['0', '1', '2', '2.5', '3']);
    expect(await column('host:h | sort -seq | fields seq | limit 3')).toEqual(['119', '118', '117']);
  });

  it('puts numbers before text and missing values last, in either direction', async () => {
    const up = await column('host:h | sort seq | fields seq');
    expect(up.slice(-4)).toEqual(['119', 'a', 'b', null]);
    const down = await column('host:h | sort -seq | fields seq');
    expect(down.slice(0, 2)).toEqual(['119', '118']);
    expect(down.slice(-4)).toEqual(['0', 'b', 'a', null]);
  });

  it('top keeps, among equal counts, the values that sort first, numbers as numbers', async () => {
    expect(await rows('host:k | top 1 code')).toEqual([['9', 2]]);
    expect(await rows('host:k | top 3 code')).toEqual([
      ['9', 2],
      ['10', 2],
      ['z', 2],
    ]);
  });

  it('timechart names, among values of equal count, the series that sort first', async () => {
    const series = new Set((await rows('host:m | timechart span=1d count() by code')).map((r) => r[1]));
    expect([...series].sort()).toEqual(['10', '11', '12', '13', '9', 'other']);
  });

  it('sorts a column made by stats by the same rule', async () => {
    expect(await rows('host:h | stats count() as n by group | sort -group')).toEqual([
      ['2', 40],
      ['1', 40],
      ['0', 40],
      ['x', 3],
      [null, 1],
    ]);
    expect(await rows('host:h | stats count() as n by seq | sort seq | limit 3')).toEqual([
      ['0', 1],
      ['1', 1],
      ['2', 1],
    ]);
  });
});
