import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';

/**
 * The Table query type (docs/query-language.md#table): a pipe's expression or condition nested deeper than the
 * limit (unary minus signs, operator chains, NOT, parentheses) is a 400 naming the limit,
 * never a 500 or an engine's error; within the limit it runs.
 */
describe(`Table: how deep expressions nest (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  const now = Math.floor(Date.now() / 1000);
  const range = { ts_from: now - 3600, ts_to: now + 60 };

  beforeAll(async () => {
    t = await createTestApp();
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      payload: [
        { message: 'seven', seq: 7 },
        { message: 'eight', seq: 8 },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
  });
  afterAll(() => t.close());

  const post = (query: string) =>
    t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Table', params: { time_range: range, query } },
    });
  const column = async (query: string) => {
    const res = await post(query);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().status).toBe('SUCCESS');
    return (res.json().results.rows as Array<Array<string | number | null>>).map((r) => r[0]);
  };

  it.each([
    ['unary minus signs', `* | eval x = ${'-'.repeat(9000)}1`],
    ['minus signs with spaces', `* | eval x = ${'- '.repeat(4000)}seq`],
    ['a chain of additions', `* | eval x = 1${' + 1'.repeat(2000)}`],
    ['NOT before a condition', `* | where ${'NOT '.repeat(2000)}seq > 1`],
    ['parentheses', `* | eval x = ${'('.repeat(40)}1${')'.repeat(40)}`],
  ])('%s nested past the limit → 400 naming it', async (_, query) => {
    const res = await post(query);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().detail).toMatch(/nested more than (64|16) levels deep/);
    expect(Object.keys(res.json().errors)).toEqual(['params.query']);
  });

  it('the limit is 64 levels: an expression of 64 runs, one of 65 is refused', async () => {
    expect(await column(`seq:7 | eval x = seq${' + 1'.repeat(63)} | fields x`)).toEqual([70]);
    const over = await post(`seq:7 | eval x = seq${' + 1'.repeat(64)} | fields x`);
    expect(over.statusCode, over.body).toBe(400);
    expect(over.json().detail).toContain('nested more than 64 levels deep');
    expect(over.json().detail).toContain('position 17 ');
    expect(await column('seq:7 | eval x = - - -seq + 1 + 1 | fields x')).toEqual([-5]);
    expect(await column('seq:7 | where NOT NOT (seq = 7 OR seq = 8) | fields seq')).toEqual(['7']);
  });
});
