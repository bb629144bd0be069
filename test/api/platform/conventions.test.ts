import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, TEST_BUS_URL, type TestApp } from '../../helpers/app.js';

describe(`list and error conventions on ${BACKEND}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_BODY_LIMIT: '4096' });
    // 1,004 tokens for the admin so page clamping can be seen.
    const rows = Array.from({ length: 1003 }, (_, i) => ({
      key_id: `lsbulk${String(i).padStart(6, '0')}`,
      secret_hash: 'x'.repeat(64),
      token_type: i % 2 ? ('INGEST' as const) : ('USER' as const),
      name: `bulk ${String(i).padStart(4, '0')}`,
      owner_id: 1,
      created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    }));
    await t.rt.meta.db.insertInto('auth_tokens').values(rows).execute();
  });
  afterAll(() => t.close());

  const get = (url: string, token: string | null = t.adminToken) => t.as(token, { method: 'GET', url });

  it('paginates with next/previous links and clamps page_size to 1000', async () => {
    const p1 = (await get('/api/authtokens?page_size=5000')).json();
    expect(p1.count).toBe(1004);
    expect(p1.results).toHaveLength(1000);
    expect(p1.previous).toBeNull();
    const next = new URL(p1.next);
    expect(next.searchParams.get('page')).toBe('2');
    expect(next.searchParams.get('page_size')).toBe('1000');
    const p2 = (await get(`${next.pathname}${next.search}`)).json();
    expect(p2.results).toHaveLength(4);
    expect(p2.next).toBeNull();
    expect(new URL(p2.previous).searchParams.get('page')).toBe('1');
    const ids = new Set([...p1.results, ...p2.results].map((r: { key_id: string }) => r.key_id));
    expect(ids.size).toBe(1004);
  });

  it('defaults page_size to 50 and answers a page past the end with 404 Invalid page', async () => {
    expect((await get('/api/authtokens')).json().results).toHaveLength(50);
    const res = await get('/api/authtokens?page=99');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: 'Invalid page.', code: 'not_found' });
  });

  it.each(['page=0', 'page=-1', 'page=abc', 'page_size=0', 'page_size=1.5'])(
    'rejects %s with 400',
    async (q) => {
      const res = await get(`/api/authtokens?${q}`);
      expect(res.statusCode).toBe(400);
      expect(Object.keys(res.json().errors)).toContain(q.split('=')[0]);
    },
  );

  it('orders by one or several fields and rejects unknown ones', async () => {
    const asc = (await get('/api/authtokens?ordering=name&page_size=3'))
      .json()
      .results.map((r: { name: string }) => r.name);
    expect(asc).toEqual([...asc].sort());
    const desc = (await get('/api/authtokens?ordering=-name&page_size=3'))
      .json()
      .results.map((r: { name: string }) => r.name);
    expect(desc[0] > desc[1]).toBe(true);
    const multi = (await get('/api/authtokens?ordering=token_type,-created_at&page_size=1000')).json()
      .results;
    expect(multi[0].token_type).toBe('INGEST');
    expect(multi[0].created_at >= multi[1].created_at).toBe(true);
    const bad = await get('/api/authtokens?ordering=secret_hash');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.ordering[0]).toMatch(/Unknown field "secret_hash"/);
  });

  it('accepts every boolean spelling and rejects others', async () => {
    for (const v of ['true', 'FALSE', '1', '0', 'yes', 'No', 'TrUe']) {
      expect((await get(`/api/authtokens?show_all=${v}&page_size=1`)).statusCode).toBe(200);
    }
    for (const v of ['maybe', '2', '', 'on']) {
      const res = await get(`/api/authtokens?show_all=${v}`);
      expect(res.statusCode, v).toBe(400);
      expect(res.json().errors.show_all[0]).toMatch(/boolean/);
    }
  });

  it('answers with and without a trailing slash alike', async () => {
    const a = await get('/api/authtokens?page_size=2');
    const b = await get('/api/authtokens/?page_size=2');
    expect(b.statusCode).toBe(200);
    expect(b.json().count).toBe(a.json().count);
    expect((await get('/api/users/me/')).statusCode).toBe(200);
  });

  it('401 without a token, with an unknown token, and with a malformed header', async () => {
    for (const headers of [{}, { authorization: 'token lsNOPE_nothing' }, { authorization: 'Basic abc' }]) {
      const res = await t.app.inject({ method: 'GET', url: '/api/authtokens', headers });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Token');
      expect(res.json().code).toMatch(/not_authenticated|authentication_failed/);
    }
  });

  it('accepts the Bearer scheme and any case of "token"', async () => {
    for (const scheme of ['Bearer', 'TOKEN', 'Token']) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/api/users/me',
        headers: { authorization: `${scheme} ${t.adminToken}` },
      });
      expect(res.statusCode).toBe(200);
    }
  });

  it('403 for an INGEST token outside ingestion', async () => {
    const ingest = await t.rt.services.tokens.create(1, { token_type: 'INGEST' });
    for (const url of ['/api/authtokens', '/api/users/me', '/api/users']) {
      const res = await get(url, ingest.secret_key);
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('permission_denied');
    }
  });

  it('415 for text/plain and other media types', async () => {
    for (const type of ['text/plain', 'application/xml']) {
      const res = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/authtokens',
        headers: { 'content-type': type },
        payload: 'token_type=USER',
      });
      expect(res.statusCode).toBe(415);
      expect(res.json().code).toBe('unsupported_media_type');
    }
  });

  it('400 for malformed JSON and for a JSON value of the wrong shape', async () => {
    const bad = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/authtokens',
      headers: { 'content-type': 'application/json' },
      payload: '{"token_type": "USER",',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toMatch(/JSON/);
    const arr = await t.as(t.adminToken, { method: 'POST', url: '/api/authtokens', payload: [1, 2] });
    expect(arr.statusCode).toBe(400);
  });

  it("400 for a form of a union told apart by its type: only that form's errors, not the others'", async () => {
    const post = (condition: object) =>
      t.as(t.adminToken, {
        method: 'POST',
        url: '/api/triggers',
        payload: { name: 'x', query: 'error', condition },
      });
    const bad = await post({ type: 'threshold', op: 'gt', value: -5, window_seconds: 300 });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual({ 'condition.value': ['Must be >= 0.'] });
    // No type at all: no form is chosen, and the union says so.
    const none = await post({ op: 'gt', value: 5, window_seconds: 300 });
    expect(none.statusCode).toBe(400);
    expect(none.json().errors.condition).toEqual(['Does not match any of the allowed forms.']);
  });

  it('400 naming the field for JSON nested deeper than 64 levels, on any route', async () => {
    const deep = (n: number): unknown => (n === 0 ? 1 : { a: deep(n - 1) });
    for (const [url, payload] of [
      ['/api/tasks', { title: 'deep', description: deep(65) }],
      [
        '/api/dashboards',
        { title: 'deep', widgets: [{ title: 'w', query: { type: 'Search', params: deep(500) } }] },
      ],
    ] as const) {
      const res = await t.as(t.adminToken, { method: 'POST', url, payload });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().detail).toMatch(/nested more than 64 levels/);
      expect(Object.keys(res.json().errors)[0]).toMatch(/^(description|widgets\[0\]\.query\.params)(\.a)+$/);
    }
    const fine = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/tasks',
      payload: { title: 'not deep' },
    });
    expect(fine.statusCode).toBe(200);
  });

  it('413 for an oversized body, writing nothing', async () => {
    const before = (await get('/api/authtokens?page_size=1')).json().count;
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/authtokens',
      payload: { token_type: 'USER', name: 'x'.repeat(10_000) },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('payload_too_large');
    expect((await get('/api/authtokens?page_size=1')).json().count).toBe(before);
  });

  it('parses JSON-in-form fields and reports bad JSON text by field', async () => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/users',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `username=formuser&is_admin=false&permissions=${encodeURIComponent('["manage_tasks"]')}`,
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      username: 'formuser',
      is_admin: false,
      permissions: ['manage_tasks'],
    });
    const bad = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/users',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'username=formuser2&permissions=%5Bnot-json',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.permissions).toBeDefined();
  });

  it('answers unknown routes with the error shape, and health without auth', async () => {
    const res = await get('/api/nothing-here');
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('not_found');
    const health = await t.app.inject({ method: 'GET', url: '/api/health' });
    expect(health.json()).toMatchObject({ status: 'ok' });
    // docs/api/service-endpoints.md: each store named, with its kind and state.
    expect(health.json().dependencies).toEqual({
      metadata: { kind: BACKEND, status: 'ok' },
      events: { kind: EVENT_STORE, status: 'ok' },
      bus: { kind: TEST_BUS_URL ? 'redis' : 'in-process', status: 'ok' },
      // The embedded store's cold tier (docs/operations/cold-tier.md).
      ...(EVENT_STORE === 'duckdb' ? { cold: { kind: 'directory', status: 'ok' } } : {}),
    });
  });
});
