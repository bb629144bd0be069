import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Severity } from '../../../src/core/event.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { event, T0 } from '../../helpers/seed.js';

/**
 * Query semantics made precise (docs/intake/http.md): severity order, numbers in extra fields,
 * `message:word`, and invalid input refused at validation with the field named.
 */

const RANGE = { ts_from: T0 / 1000, ts_to: T0 / 1000 + 3600 };
const ORDER: Severity[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
/** Missing severities after every other. */
const rank = (s: Severity | null) => (s === null ? ORDER.length : ORDER.indexOf(s));

interface Ev {
  ev_id: string;
  severity: Severity | null;
  message: string | null;
  [field: string]: unknown;
}

describe(`query semantics on ${BACKEND}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    let i = 0;
    const at = () => T0 + 1000 * i++;
    // Two events of each severity, one without.
    const severities = [...ORDER, ...ORDER, null].map((severity) =>
      event({ ts: at(), severity, app: 'sev', message: `severity ${severity ?? 'none'}` }),
    );
    // Durations as text, as extra fields are stored: numbers mixed with text and gaps.
    const durations = ['999', '1979', '5', '12.5', 'abc', '-3', 'NaN', '1e400', undefined].map((d) =>
      event({
        ts: at(),
        app: 'dur',
        message: `duration ${d ?? 'none'}`,
        fields: d === undefined ? {} : { 'http.duration_ms': d },
      }),
    );
    const messages = [
      'Connection refused by 10.0.0.1',
      'connection REFUSED again',
      'refusedconnection',
      'accepted',
      'Connection refused',
    ].map((message) => event({ ts: at(), app: 'msg', message }));
    await t.rt.events.append([...severities, ...durations, ...messages]);
  });
  afterAll(() => t.close());

  const post = (params: object, type = 'Search') =>
    t.as(t.adminToken, { method: 'POST', url: '/api/query', payload: { type, params } });
  const search = async (params: object): Promise<{ total: number; events: Ev[] }> => {
    const res = await post({ time_range: RANGE, page_size: 100, ...params });
    expect(res.statusCode, res.body).toBe(200);
    const q = res.json();
    expect(q.status, q.error).toBe('SUCCESS');
    return q.results;
  };
  const severities = async (params: object) =>
    (
      await search({ ...params, query: ['app:sev', (params as { query?: string }).query ?? ''].join(' ') })
    ).events
      .map((e) => e.severity)
      .sort((a, b) => rank(a) - rank(b));
  const twice = (list: Severity[]) => list.flatMap((s) => [s, s]);
  const expect400 = async (params: object, field: string, type = 'Search') => {
    const res = await post({ time_range: RANGE, ...params }, type);
    expect(res.statusCode, res.body).toBe(400);
    const body = res.json();
    expect(Object.keys(body.errors ?? {}), res.body).toContain(field);
    return body;
  };

  describe('severity compares and sorts by syslog rank', () => {
    it('severity:>=error in the query language', async () => {
      expect(await severities({ query: 'severity:>=error' })).toEqual(
        twice(['error', 'critical', 'alert', 'emergency']),
      );
      expect(await severities({ query: 'severity:<notice' })).toEqual(twice(['debug', 'info']));
      expect(await severities({ query: 'severity:[warning TO critical]' })).toEqual(
        twice(['warning', 'error', 'critical']),
      );
      expect(await severities({ query: 'severity:{warning TO critical]' })).toEqual(
        twice(['error', 'critical']),
      );
      // Aliases and syslog codes name a severity (3 is error), in relations and equality.
      expect(await severities({ query: 'severity:>crit' })).toEqual(twice(['alert', 'emergency']));
      expect(await severities({ query: 'severity:>=3' })).toEqual(
        twice(['error', 'critical', 'alert', 'emergency']),
      );
      expect(await severities({ query: 'severity:warn' })).toEqual(twice(['warning']));
      expect(await severities({ query: 'NOT severity:>=info' })).toEqual([...twice(['debug']), null]);
    });

    it('gte / between in JSON filters', async () => {
      expect(await severities({ filter: [{ field: 'severity', op: 'gte', value: 'error' }] })).toEqual(
        twice(['error', 'critical', 'alert', 'emergency']),
      );
      expect(await severities({ filter: [['severity', 'lt', 'WARNING']] })).toEqual(
        twice(['debug', 'info', 'notice']),
      );
      expect(
        await severities({ filter: [{ field: 'severity', op: 'between', value: ['info', 'warning'] }] }),
      ).toEqual(twice(['info', 'notice', 'warning']));
      expect(await severities({ filter: [['severity', 'between', [1, 0]]] })).toEqual(
        twice(['alert', 'emergency']),
      );
      expect(await severities({ filter: [['severity', 'gt', 'emergency']] })).toEqual([]);
    });

    it('sorts by rank, missing last in both directions', async () => {
      const desc = await search({ query: 'app:sev', sort: ['-severity'] });
      expect(desc.events.map((e) => e.severity)).toEqual([...twice([...ORDER].reverse()), null]);
      const asc = await search({ query: 'app:sev', sort: ['severity'] });
      expect(asc.events.map((e) => e.severity)).toEqual([...twice(ORDER), null]);
    });

    it('refuses a relation with a value that is no severity, naming the field', async () => {
      const q = await expect400({ query: 'severity:>=bogus' }, 'params.query');
      expect(q.detail).toMatch(/severity/);
      await expect400(
        { filter: [{ field: 'severity', op: 'gt', value: 'bogus' }] },
        'params.filter[0].value',
      );
      await expect400({ filter: [['severity', 'between', ['info', 'loud']]] }, 'params.filter[0][2][1]');
      await expect400({ filter: [['severity', 'lte', 9]] }, 'params.filter[0][2]');
    });
  });

  describe('numbers in extra fields', () => {
    const durations = async (sort: string) =>
      (await search({ query: 'app:dur', sort: [sort] })).events.map((e) => e['http.duration_ms'] ?? null);

    it('sorts numbers first in numeric order, then text, missing last', async () => {
      expect(await durations('-http.duration_ms')).toEqual([
        '1979',
        '999',
        '12.5',
        '5',
        '-3',
        'abc',
        'NaN',
        '1e400',
        null,
      ]);
      expect(await durations('http.duration_ms')).toEqual([
        '-3',
        '5',
        '12.5',
        '999',
        '1979',
        '1e400',
        'NaN',
        'abc',
        null,
      ]);
    });

    it('compares numerically and aggregates only numbers', async () => {
      const over = await search({ query: 'http.duration_ms:>100' });
      expect(over.events.map((e) => e['http.duration_ms']).sort()).toEqual(['1979', '999']);
      const res = await post(
        {
          time_range: RANGE,
          query: 'app:dur',
          metrics: [
            { op: 'max', field: 'http.duration_ms' },
            { op: 'min', field: 'http.duration_ms' },
            { op: 'sum', field: 'http.duration_ms' },
            { op: 'max', field: 'ts' },
          ],
        },
        'Summary',
      );
      expect(res.statusCode, res.body).toBe(200);
      // NaN and 1e400 are text, not numbers (as in filters and sorting).
      expect(res.json().results.totals).toMatchObject({
        'max_http.duration_ms': 1979,
        'min_http.duration_ms': -3,
        'sum_http.duration_ms': 1979 + 999 + 5 + 12.5 - 3,
        // Times in Unix seconds, the API's unit: the last duration event is the 26th.
        max_ts: T0 / 1000 + 25,
      });
    });
  });

  describe('message:word searches like a bare word', () => {
    const messages = async (query: string) =>
      (await search({ query: `app:msg AND (${query})` })).events.map((e) => e.message).sort();

    it('matches case-insensitive words and phrases inside the message', async () => {
      const bare = await messages('refused');
      expect(bare).toHaveLength(4);
      expect(await messages('message:refused')).toEqual(bare);
      expect(await messages('message:REFUSED')).toEqual(bare);
      expect(await messages('message:"connection refused"')).toEqual(
        ['Connection refused', 'Connection refused by 10.0.0.1', 'connection REFUSED again'].sort(),
      );
      expect(await messages('message:conn*')).toEqual(await messages('conn*'));
      expect(await messages('message:refused*again')).toEqual(['connection REFUSED again']);
      expect(await messages('-message:refused')).toEqual(['accepted']);
      expect(await messages('message:(accepted OR again)')).toEqual(['accepted', 'connection REFUSED again']);
    });

    it('leaves the JSON filter eq and other fields exact', async () => {
      const eq = await search({ query: 'app:msg', filter: [['message', 'eq', 'Connection refused']] });
      expect(eq.events.map((e) => e.message)).toEqual(['Connection refused']);
      const none = await search({ query: 'app:msg', filter: [['message', 'eq', 'connection refused']] });
      expect(none.total).toBe(0);
      expect((await search({ query: 'app:ms' })).total).toBe(0);
    });
  });

  describe('invalid input is refused at validation, naming the field', () => {
    it('a regex RE2 does not accept, in the query language and JSON filters', async () => {
      for (const pattern of ['(?<n>a)', '(?=a)', 'a\\1', '[z-a]', 'a{2000}']) {
        await expect400({ query: `host:/${pattern}/` }, 'params.query');
        await expect400({ filter: [['host', 'regex', pattern]] }, 'params.filter[0][2]');
      }
    });

    it('times outside the years 0..9999', async () => {
      await expect400({ time_range: { ts_from: 0, ts_to: 1e20 } }, 'params.time_range.ts_to');
      await expect400({ time_range: { ts_from: -1e15, ts_to: 0 } }, 'params.time_range.ts_from');
      // The edges themselves are fine.
      const edge = await post({ time_range: { ts_from: -62_167_219_200, ts_to: 253_402_300_800 } });
      expect(edge.statusCode, edge.body).toBe(200);
      expect(edge.json().status).toBe('SUCCESS');
    });

    it('a page whose position is not a safe integer', async () => {
      await expect400({ page: 9007199254740992 }, 'params.page');
      await expect400({ page: 2 ** 50, page_size: 100 }, 'params.page');
      const q = (await post({ time_range: RANGE, page_size: 10 })).json();
      for (const qs of [
        'page=9007199254740992',
        'page=1e300',
        'page=2&page_size=10000&offset=9007199254740000',
      ]) {
        const res = await t.as(t.adminToken, { method: 'GET', url: `/api/query/${q.query_id}?${qs}` });
        expect(res.statusCode, `${qs}: ${res.body}`).toBe(400);
        expect(Object.keys(res.json().errors ?? {})).toContain(qs.includes('offset') ? 'offset' : 'page');
      }
      const ok = await t.as(t.adminToken, {
        method: 'GET',
        url: `/api/query/${q.query_id}?offset=900719925474`,
      });
      expect(ok.statusCode, ok.body).toBe(200);
      expect(ok.json().results.events).toEqual([]);
    });

    it('JSON nested deeper than 64 levels', async () => {
      const raw = (params: string) =>
        t.as(t.adminToken, {
          method: 'POST',
          url: '/api/query',
          headers: { 'content-type': 'application/json' },
          payload: `{"type":"Search","params":${params}}`,
        });
      // Deeper than the stack of a recursive walk: a 400 naming where, not a 500.
      const n = 5000;
      const deep = await raw(`{"filter":[${'{"not":'.repeat(n)}["host","eq","x"]${'}'.repeat(n)}]}`);
      expect(deep.statusCode, deep.body.slice(0, 300)).toBe(400);
      expect(deep.json().detail).toMatch(/nested more than 64 levels/);
      // 64 levels counted from the request body (the body-level check of every route).
      expect(Object.keys(deep.json().errors)).toEqual([`params.filter[0]${'.not'.repeat(61)}`]);
      const brackets = await raw(`{"filter":${'['.repeat(200_000)}${']'.repeat(200_000)}}`);
      expect(brackets.statusCode, brackets.body.slice(0, 300)).toBe(400);
      // Within 64 levels, a deep filter is bounded by the filter's own limit, path named.
      let nested: unknown = ['host', 'eq', 'x'];
      for (let i = 0; i < 30; i++) nested = { not: nested };
      const f = await expect400({ filter: [nested] }, `params.filter[0]${'.not'.repeat(15)}`);
      expect(f.detail).toMatch(/nested more than 14 levels/);
    });

    it('engine errors never reach a client', async () => {
      const spy = vi
        .spyOn(t.rt.events, 'execute')
        .mockRejectedValueOnce(
          new Error('Binder Error: Referenced column "secret" not found in FROM clause!'),
        );
      try {
        const res = await post({ time_range: RANGE });
        expect(res.statusCode, res.body).toBe(200);
        const q = res.json();
        expect(q.status).toBe('ERROR');
        expect(q.error).not.toMatch(/Binder|secret|column/);
        expect(q.error).toMatch(/internal error/);
      } finally {
        spy.mockRestore();
      }
    });
  });
});
