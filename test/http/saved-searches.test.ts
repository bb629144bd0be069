import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../helpers/app.js';

type Who = { id: number; token: string };

/** /api/saved-searches (API §19): kept, shared with teams or everyone, changed by their owner. */
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
});
