import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

type Who = { id: number; token: string };

/** /api/saved-searches (docs/api/saved-searches.md): kept, shared with teams or everyone, changed by their owner. */
describe(`saved searches on ${BACKEND}`, () => {
  let t: TestApp;
  let ada: Who;
  let ben: Who;
  let cy: Who;
  let team: number;
  const call = (
    token: string,
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ) => t.as(token, { method, url, ...(payload ? { payload } : {}) });
  const titles = async (token: string, qs = '') => {
    const res = await call(token, 'GET', `/api/saved-searches${qs}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().results as Array<{ title: string }>).map((s) => s.title).sort();
  };

  beforeAll(async () => {
    t = await createTestApp();
    ada = await t.user('ada');
    ben = await t.user('ben');
    cy = await t.user('cy');
    team = (await call(t.adminToken, 'POST', '/api/teams', { name: 'ops', members: [ada.id, ben.id] })).json()
      .id;
  });
  afterAll(() => t.close());

  it('saves a search with its defaults; the owner and admins see it, others do not', async () => {
    const res = await call(ada.token, 'POST', '/api/saved-searches', {
      title: 'Failed logins',
      query: 'action:login_failure',
      columns: ['ts', 'host', 'user'],
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      title: 'Failed logins',
      description: '',
      query: 'action:login_failure',
      filter: [],
      time_range: { preset: 'last_hour' },
      streams: null,
      columns: ['ts', 'host', 'user'],
      sort: ['-ts'],
      owner: ada.id,
      shared_with: { teams: [], everyone: false },
    });
    const id = res.json().id;
    expect((await call(t.adminToken, 'GET', `/api/saved-searches/${id}`)).statusCode).toBe(200);
    expect((await call(ben.token, 'GET', `/api/saved-searches/${id}`)).statusCode).toBe(404);
    expect(await titles(ben.token)).toEqual([]);
  });

  it('shares with a team or everyone; only the owner (and admins) change or delete', async () => {
    const made = await call(ada.token, 'POST', '/api/saved-searches', {
      title: 'Ops errors',
      query: 'severity:error',
      shared_with: { teams: [team] },
    });
    const id = made.json().id;
    expect(await titles(ben.token)).toEqual(['Ops errors']);
    expect(await titles(cy.token)).toEqual([]);
    // Ben sees it but may not change or delete it.
    expect(
      (await call(ben.token, 'PATCH', `/api/saved-searches/${id}`, { title: 'Mine now' })).statusCode,
    ).toBe(403);
    expect((await call(ben.token, 'DELETE', `/api/saved-searches/${id}`)).statusCode).toBe(403);
    const everyone = await call(ada.token, 'PATCH', `/api/saved-searches/${id}`, {
      shared_with: { everyone: true },
    });
    expect(everyone.statusCode, everyone.body).toBe(200);
    expect(everyone.json().shared_with).toEqual({ teams: [team], everyone: true });
    expect(await titles(cy.token)).toEqual(['Ops errors']);
    // Filters: title, owner, shared.
    expect(await titles(ada.token, '?title=ERR')).toEqual(['Ops errors']);
    expect(await titles(ada.token, `?owner=${ada.id}`)).toEqual(['Failed logins', 'Ops errors']);
    expect(await titles(ada.token, '?shared=true')).toEqual([]);
    expect(await titles(cy.token, '?shared=true')).toEqual(['Ops errors']);
    // PUT: left out returns to its default (no longer shared).
    const put = await call(ada.token, 'PUT', `/api/saved-searches/${id}`, { title: 'Ops errors' });
    expect(put.json()).toMatchObject({ query: '', shared_with: { teams: [], everyone: false } });
    expect(await titles(cy.token)).toEqual([]);
    expect((await call(t.adminToken, 'DELETE', `/api/saved-searches/${id}`)).statusCode).toBe(204);
    expect((await call(ada.token, 'GET', `/api/saved-searches/${id}`)).statusCode).toBe(404);
  });

  it('refuses a bad query, filter, range or team with 400 at the field, storing nothing', async () => {
    const before = (await call(t.adminToken, 'GET', '/api/saved-searches')).json().count;
    const bad = async (payload: object, field: string) => {
      const res = await call(ada.token, 'POST', '/api/saved-searches', { title: 'x', ...payload });
      expect(res.statusCode, res.body).toBe(400);
      expect(Object.keys(res.json().errors)).toContain(field);
    };
    await bad({ query: 'host:(web' }, 'query');
    await bad({ filter: [{ field: 'host', op: 'nope', value: 1 }] }, 'filter[0].op');
    await bad({ time_range: { preset: 'last_forever' } }, 'time_range');
    await bad({ shared_with: { teams: [99_999] } }, 'shared_with.teams');
    expect((await call(ada.token, 'POST', '/api/saved-searches', { title: '  ' })).statusCode).toBe(400);
    expect((await call(t.adminToken, 'GET', '/api/saved-searches')).json().count).toBe(before);
  });

  it('takes a form body: query as plain text, nested values as JSON text', async () => {
    const res = await t.as(ben.token, {
      method: 'POST',
      url: '/api/saved-searches',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        title: 'From a form',
        query: 'app:nginx AND status:>=500',
        time_range: JSON.stringify({ preset: 'last_24_hours' }),
        columns: JSON.stringify(['ts', 'message']),
      }).toString(),
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      query: 'app:nginx AND status:>=500',
      time_range: { preset: 'last_24_hours' },
      columns: ['ts', 'message'],
    });
  });

  it('keeps what a PATCH leaves out: the time range stays after a change of title or sharing', async () => {
    const made = await call(ada.token, 'POST', '/api/saved-searches', {
      title: 'Four hours',
      time_range: { preset: 'last_4_hours' },
    });
    const id = made.json().id;
    for (const change of [{ title: 'Four hours, renamed' }, { shared_with: { teams: [team] } }]) {
      const res = await call(ada.token, 'PATCH', `/api/saved-searches/${id}`, change);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().time_range).toEqual({ preset: 'last_4_hours' });
    }
    expect((await call(ada.token, 'GET', `/api/saved-searches/${id}`)).json()).toMatchObject({
      title: 'Four hours, renamed',
      time_range: { preset: 'last_4_hours' },
      shared_with: { teams: [team], everyone: false },
    });
    await call(ada.token, 'DELETE', `/api/saved-searches/${id}`);
  });

  it('no PATCH body of the API fills in a default for what it leaves out', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/schema' })).json() as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>
      >;
      components: { schemas: Record<string, Schema> };
    };
    type Schema = { $ref?: string; default?: unknown; properties?: Record<string, Schema> };
    const resolve = (s: Schema): Schema =>
      s.$ref ? resolve(doc.components.schemas[s.$ref.replace('#/components/schemas/', '')] as Schema) : s;
    const filled: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [type, media] of Object.entries(ops.patch?.requestBody?.content ?? {}))
        for (const [name, prop] of Object.entries(resolve(media.schema).properties ?? {}))
          if (resolve(prop).default !== undefined) filled.push(`PATCH ${path} (${type}): ${name}`);
    expect(filled).toEqual([]);
  });

  it('lists in pages with several owners, comma-separated, beside the other filters', async () => {
    const made: number[] = [];
    for (const [who, title, shared] of [
      [ada, 'a1 alpha', { everyone: true }],
      [ben, 'b1 alpha', { teams: [team] }],
      [ben, 'b2 beta', {}],
      [cy, 'c1 alpha', { everyone: true }],
      [cy, 'c2 alpha', {}],
    ] as const) {
      const res = await call(who.token, 'POST', '/api/saved-searches', { title, shared_with: shared });
      expect(res.statusCode, res.body).toBe(201);
      made.push(res.json().id);
    }
    // Ada sees her own, Ben's shared with her team, Cy's shared with everyone.
    const list = (token: string, qs: string) => call(token, 'GET', `/api/saved-searches${qs}`);
    const both = await list(ada.token, `?owner=${ben.id},${cy.id}&title=alpha&ordering=title&page_size=1`);
    expect(both.statusCode, both.body).toBe(200);
    expect(both.json()).toMatchObject({ count: 2, previous: null, results: [{ title: 'b1 alpha' }] });
    const second = await t.as(ada.token, {
      method: 'GET',
      url: new URL(both.json().next).pathname + new URL(both.json().next).search,
    });
    expect(second.json()).toMatchObject({ count: 2, next: null, results: [{ title: 'c1 alpha' }] });
    expect(await titles(ada.token, `?owner=${ada.id},${cy.id}&title=ALPHA`)).toEqual([
      'a1 alpha',
      'c1 alpha',
    ]);
    expect(await titles(cy.token, `?owner=${ada.id}, ${ben.id}&shared=true`)).toEqual(['a1 alpha']);
    expect(await titles(ben.token, '?shared=false&ordering=-title')).toEqual([
      'From a form',
      'b1 alpha',
      'b2 beta',
    ]);
    const bad = await list(ada.token, '?owner=1,ada');
    expect(bad.statusCode, bad.body).toBe(400);
    expect(Object.keys(bad.json().errors)).toEqual(['owner']);
    expect((await list(ada.token, '?title=alpha&page=4&page_size=1')).statusCode).toBe(404);
    for (const id of made)
      expect((await call(t.adminToken, 'DELETE', `/api/saved-searches/${id}`)).statusCode).toBe(204);
  });
});

describe(`saved searches are bounded in size and per user on ${BACKEND}`, () => {
  let t: TestApp;
  let ada: Who;
  let ben: Who;
  const post = (who: Who, payload: object) =>
    t.as(who.token, { method: 'POST', url: '/api/saved-searches', payload });
  const count = async (who: Who) =>
    (await t.as(who.token, { method: 'GET', url: '/api/saved-searches' })).json().count as number;

  beforeAll(async () => {
    t = await createTestApp({
      LOGSCOPE_SAVED_SEARCHES_PER_USER: '3',
      LOGSCOPE_SAVED_SEARCH_MAX_BYTES: '4096',
    });
    ada = await t.user('ada');
    ben = await t.user('ben');
  });
  afterAll(() => t.close());

  it('refuses a saved search larger than savedSearchMaxBytes, on create and on a PATCH, storing nothing', async () => {
    const big = [{ field: 'host', op: 'eq', value: 'x'.repeat(5000) }];
    const refused = await post(ada, { title: 'big', filter: big });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().detail).toContain('savedSearchMaxBytes');
    expect(Object.keys(refused.json().errors)).toEqual(['filter']);
    expect(await count(ada)).toBe(0);
    // Each field within its own bound, the whole over it.
    const made = await post(ada, { title: 'small', description: 'd'.repeat(3000) });
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().id;
    const grown = await t.as(ada.token, {
      method: 'PATCH',
      url: `/api/saved-searches/${id}`,
      payload: { query: 'host:web', filter: [{ field: 'app', op: 'eq', value: 'y'.repeat(1500) }] },
    });
    expect(grown.statusCode, grown.body).toBe(400);
    expect(grown.json().detail).toContain('4096 bytes');
    const kept = (await t.as(ada.token, { method: 'GET', url: `/api/saved-searches/${id}` })).json();
    expect(kept).toMatchObject({ query: '', filter: [] });
    expect((await t.as(ada.token, { method: 'DELETE', url: `/api/saved-searches/${id}` })).statusCode).toBe(
      204,
    );
  });

  it('refuses a saved search past savedSearchesPerUser with 409; another user is not counted', async () => {
    for (let i = 1; i <= 3; i++) expect((await post(ada, { title: `s${i}` })).statusCode).toBe(201);
    const over = await post(ada, { title: 's4' });
    expect(over.statusCode, over.body).toBe(409);
    expect(over.json()).toMatchObject({ code: 'limit_reached' });
    expect(over.json().detail).toContain('savedSearchesPerUser');
    expect(await count(ada)).toBe(3);
    expect((await post(ben, { title: 'b1' })).statusCode).toBe(201);
    const first = (await t.as(ada.token, { method: 'GET', url: '/api/saved-searches?ordering=id' })).json()
      .results[0].id;
    await t.as(ada.token, { method: 'DELETE', url: `/api/saved-searches/${first}` });
    expect((await post(ada, { title: 's4' })).statusCode).toBe(201);
  });
});
