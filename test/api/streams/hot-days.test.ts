import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';

interface StreamBody {
  id: number;
  title: string;
  retention_days: number | null;
  hot_days: number | null;
  builtin: boolean;
  updated_at: string;
}
type Method = 'POST' | 'PUT' | 'PATCH';

/**
 * A stream's `hot_days` (the cold tier's per-stream setting): null or 1–36,500, never
 * above the stream's effective retention (its `retention_days`, else the `retentionDays`
 * setting, here 30; 0 keeps all so allows any). On the ClickHouse event store every
 * value but null is refused with `cold_tier_needs_embedded_store`: the same requests,
 * the answers of the store the suite runs on.
 */
describe(`a stream's hot_days on ${BACKEND}`, () => {
  const embedded = EVENT_STORE === 'duckdb';
  let t: TestApp;
  let keeper: string;

  const call = (method: 'GET' | 'DELETE' | Method, url: string, payload?: object) =>
    t.as(keeper, { method, url, ...(payload ? { payload } : {}) });
  const all = async (): Promise<StreamBody[]> => (await call('GET', '/api/streams')).json().results;
  const byTitle = async (title: string) => (await all()).find((s) => s.title === title) as StreamBody;
  /** A stream to change, made with `hot_days` when the store takes it. */
  const stream = async (title: string, extra: object = {}) => {
    const res = await call('POST', '/api/streams', { title, rule: `app:${title}`, ...extra });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as StreamBody;
  };
  /** Refused with 400 naming `field`, and every stream as it was. */
  const refused = async (method: Method, url: string, payload: object, field: string) => {
    const before = await all();
    const res = await call(method, url, payload);
    const what = `${method} ${JSON.stringify(payload)} → ${res.body.slice(0, 300)}`;
    expect(res.statusCode, what).toBe(400);
    const body = res.json();
    expect(Object.keys(body.errors ?? {}).includes(field) || String(body.detail).includes(field), what).toBe(
      true,
    );
    expect(await all()).toEqual(before);
    return body;
  };
  /** Refused on ClickHouse as the cold tier's; on the embedded store, `field`'s 400 (or none). */
  const setHot = async (method: Method, url: string, payload: object, field?: string) => {
    if (!embedded && (payload as { hot_days?: unknown }).hot_days != null) {
      const body = await refused(method, url, payload, 'hot_days');
      expect(body.code).toBe('cold_tier_needs_embedded_store');
      expect(body.detail).toMatch(/cold tier needs the embedded \(DuckDB\) event store/);
      return undefined;
    }
    if (field) return refused(method, url, payload, field);
    const res = await call(method, url, payload);
    expect(res.statusCode, res.body).toBe(method === 'POST' ? 201 : 200);
    return res.json() as StreamBody;
  };

  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_RETENTION_DAYS: '30' });
    keeper = (await t.user('keeper', { permissions: ['manage_streams'] })).token;
  });
  afterAll(() => t.close());

  it('is null unless given, and takes 1 up to the effective retention', async () => {
    expect((await stream('plain')).hot_days).toBe(null);
    const cases: Array<[object, number]> = [
      [{ hot_days: 1 }, 1],
      [{ hot_days: 30 }, 30],
      [{ retention_days: 90, hot_days: 90 }, 90],
      [{ retention_days: 0, hot_days: 36_500 }, 36_500],
      [{ hot_days: null }, 0],
    ];
    for (const [i, [extra, hot]] of cases.entries()) {
      const made = await setHot('POST', '/api/streams', { title: `ok${i}`, rule: 'a', ...extra });
      if (made) expect(made.hot_days).toBe(hot || null);
    }
    if (!embedded) {
      // hot_days: null is no cold tier: ClickHouse takes it.
      expect((await byTitle('ok4')).hot_days).toBe(null);
      expect((await all()).map((s) => s.title)).toEqual(['Default', 'plain', 'ok4']);
    }
  });

  it('refuses a bad hot_days on POST, PUT and PATCH with a 400 naming it, changing nothing', async () => {
    const short = await stream('short', { retention_days: 10 });
    const setting = await stream('setting');
    const bad: Array<[{ hot_days: unknown; retention_days?: number }, string]> = [
      [{ hot_days: 1.5 }, 'not an integer'],
      [{ hot_days: '7' }, 'text'],
      [{ hot_days: 0 }, 'below 1'],
      [{ hot_days: -3 }, 'below 1'],
      [{ hot_days: 36_501 }, 'above 36,500'],
      [{ retention_days: 0, hot_days: 36_501 }, 'above 36,500 though kept forever'],
      [{ retention_days: 10, hot_days: 11 }, 'above retention_days'],
      [{ hot_days: 31 }, 'above the retentionDays setting'],
    ];
    for (const [payload, why] of bad) {
      const hot = payload.hot_days;
      const expectCold =
        !embedded && typeof hot === 'number' && Number.isInteger(hot) && hot >= 1 && hot <= 36_500;
      for (const [method, url, body] of [
        ['POST', '/api/streams', { title: 'bad', rule: 'a', ...payload }],
        ['PUT', `/api/streams/${setting.id}`, { title: 'setting', rule: 'app:setting', ...payload }],
        ['PATCH', `/api/streams/${setting.id}`, payload],
      ] as Array<[Method, string, object]>) {
        const res = await refused(method, url, body, 'hot_days');
        expect(res.code, `${method} ${why}`).toBe(expectCold ? 'cold_tier_needs_embedded_store' : 'invalid');
      }
    }
    // PATCH of hot_days alone is checked against the stream's own retention_days.
    await refused('PATCH', `/api/streams/${short.id}`, { hot_days: 11 }, 'hot_days');
    expect(await byTitle('bad')).toBeUndefined();
  });

  it.runIf(embedded)('refuses retention_days below hot_days, naming retention_days', async () => {
    const s = (await setHot('POST', '/api/streams', {
      title: 'tiered',
      rule: 'app:tiered',
      retention_days: 60,
      hot_days: 20,
    })) as StreamBody;
    const url = `/api/streams/${s.id}`;
    await refused('PATCH', url, { retention_days: 19 }, 'retention_days');
    await refused(
      'PUT',
      url,
      { title: 'tiered', rule: 'app:tiered', retention_days: 19, hot_days: 20 },
      'retention_days',
    );
    // Null goes back to the retentionDays setting (30): still above 20, so taken; 10 is not.
    expect((await call('PATCH', url, { retention_days: null })).json()).toMatchObject({
      retention_days: null,
      hot_days: 20,
    });
    await refused('PATCH', url, { retention_days: 10 }, 'retention_days');
    // Forever keeps anything; equal is enough.
    expect((await call('PATCH', url, { retention_days: 0, hot_days: 5_000 })).statusCode).toBe(200);
    expect((await call('PATCH', url, { retention_days: 5_000 })).json()).toMatchObject({
      retention_days: 5_000,
      hot_days: 5_000,
    });
    // Other changes leave the pair alone.
    expect((await call('PATCH', url, { description: 'kept' })).json().hot_days).toBe(5_000);
  });

  it('sets hot_days back to null on a PUT without it', async () => {
    const s = await stream('reset', { retention_days: 0 });
    const url = `/api/streams/${s.id}`;
    const set = await setHot('PATCH', url, { hot_days: 7 });
    if (set) expect(set.hot_days).toBe(7);
    const put = await call('PUT', url, { title: 'reset', rule: 'app:reset', retention_days: 0 });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ retention_days: 0, hot_days: null });
    // A PUT that lowers retention_days and leaves hot_days out is no clash: hot_days is null.
    if (set) await call('PATCH', url, { hot_days: 7 });
    const lower = await call('PUT', url, { title: 'reset', rule: 'app:reset', retention_days: 3 });
    expect(lower.json()).toMatchObject({ retention_days: 3, hot_days: null });
  });

  it('may be set on the Default stream, within its retention', async () => {
    const d = (await all()).find((s) => s.builtin) as StreamBody;
    const url = `/api/streams/${d.id}`;
    expect(d.hot_days).toBe(null);
    await refused('PATCH', url, { hot_days: 31 }, 'hot_days');
    const set = await setHot('PATCH', url, { hot_days: 14 });
    if (set) expect(set).toMatchObject({ builtin: true, retention_days: null, hot_days: 14 });
    if (set) await refused('PATCH', url, { retention_days: 13 }, 'retention_days');
    const back = await call('PATCH', url, { hot_days: null });
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json().hot_days).toBe(null);
  });
});
