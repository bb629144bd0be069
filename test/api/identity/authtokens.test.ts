import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

describe(`authtokens on ${BACKEND}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('lists the admin token masked in the pagination envelope', async () => {
    const res = await t.as(t.adminToken, { method: 'GET', url: '/api/authtokens' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json();
    expect(body).toMatchObject({ count: 1, next: null, previous: null });
    const [tok] = body.results;
    expect(tok.secret_key).toBe(`${tok.key_id}…`);
    expect(t.adminToken.startsWith(tok.key_id)).toBe(true);
    expect(tok.token_type).toBe('USER');
    expect(Object.keys(tok).sort()).toEqual(
      [
        'created_at',
        'expires_at',
        'key_id',
        'last_used_at',
        'name',
        'owner_id',
        'secret_key',
        'token_type',
      ].sort(),
    );
  });

  it('creates tokens from JSON, urlencoded and multipart bodies', async () => {
    const json = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/authtokens',
      payload: { token_type: 'INGEST', name: 'json' },
    });
    const form = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/authtokens',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'token_type=INGEST&name=form',
    });
    const fd = new FormData();
    fd.append('token_type', 'USER');
    fd.append('name', 'multipart');
    fd.append('expires_at', new Date(Date.now() + 3600_000).toISOString());
    const multi = await t.as(t.adminToken, { method: 'POST', url: '/api/authtokens', payload: fd });
    for (const [res, name] of [
      [json, 'json'],
      [form, 'form'],
      [multi, 'multipart'],
    ] as const) {
      expect(res.statusCode, res.body).toBe(201);
      const body = res.json();
      expect(body.name).toBe(name);
      expect(body.secret_key.startsWith(`${body.key_id}_`)).toBe(true);
      expect(body.secret_key.length).toBeGreaterThan(30);
    }
    expect(multi.json().expires_at).not.toBeNull();
    // The full key only ever appears once: the stored row holds a hash.
    const row = await t.rt.meta.db
      .selectFrom('auth_tokens')
      .selectAll()
      .where('key_id', '=', json.json().key_id)
      .executeTakeFirstOrThrow();
    expect(row.secret_hash).not.toContain(json.json().secret_key);
    expect(row.secret_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads and deletes a token by full key or key_id; the deleted key stops working', async () => {
    const created = (
      await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/authtokens',
        payload: { token_type: 'USER', name: 'tmp' },
      })
    ).json();
    const byKey = await t.as(t.adminToken, { method: 'GET', url: `/api/authtokens/${created.secret_key}` });
    const byId = await t.as(t.adminToken, { method: 'GET', url: `/api/authtokens/${created.key_id}/` });
    expect(byKey.statusCode).toBe(200);
    expect(byId.json()).toEqual(byKey.json());
    expect(byKey.json().secret_key).toBe(`${created.key_id}…`);
    expect((await t.as(created.secret_key, { method: 'GET', url: '/api/users/me' })).statusCode).toBe(200);
    const del = await t.as(t.adminToken, { method: 'DELETE', url: `/api/authtokens/${created.key_id}` });
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expect(
      (await t.as(t.adminToken, { method: 'GET', url: `/api/authtokens/${created.key_id}` })).statusCode,
    ).toBe(404);
    const after = await t.as(created.secret_key, { method: 'GET', url: '/api/users/me' });
    expect(after.statusCode).toBe(401);
  });

  it('filters by token_type', async () => {
    const ingest = (
      await t.as(t.adminToken, { method: 'GET', url: '/api/authtokens?token_type=INGEST' })
    ).json();
    expect(ingest.count).toBeGreaterThan(0);
    expect(ingest.results.every((r: { token_type: string }) => r.token_type === 'INGEST')).toBe(true);
    const bad = await t.as(t.adminToken, { method: 'GET', url: '/api/authtokens?token_type=ROOT' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.token_type).toBeDefined();
  });

  it("never shows a second user the first user's tokens", async () => {
    const bob = await t.user('bob');
    const list = (await t.as(bob.token, { method: 'GET', url: '/api/authtokens?show_all=true' })).json();
    expect(list.count).toBe(1);
    expect(list.results[0].owner_id).toBe(bob.id);
    const adminKey = t.adminToken.split('_')[0];
    expect((await t.as(bob.token, { method: 'GET', url: `/api/authtokens/${adminKey}` })).statusCode).toBe(
      404,
    );
    expect((await t.as(bob.token, { method: 'DELETE', url: `/api/authtokens/${adminKey}` })).statusCode).toBe(
      404,
    );
    expect(
      (await t.as(t.adminToken, { method: 'GET', url: '/api/authtokens' })).json().count,
    ).toBeGreaterThan(1);
  });

  it('honours show_all for manage_tokens holders and admins only', async () => {
    const carol = await t.user('carol', { permissions: ['manage_tokens'] });
    const own = (await t.as(carol.token, { method: 'GET', url: '/api/authtokens' })).json();
    expect(own.count).toBe(1);
    const all = (await t.as(carol.token, { method: 'GET', url: '/api/authtokens?show_all=YES' })).json();
    expect(all.count).toBeGreaterThan(2);
    expect(new Set(all.results.map((r: { owner_id: number }) => r.owner_id)).size).toBeGreaterThan(1);
    const adminAll = (await t.as(t.adminToken, { method: 'GET', url: '/api/authtokens?show_all=1' })).json();
    expect(adminAll.count).toBe(all.count);
  });

  it('rejects bad creation bodies naming the field, writing nothing', async () => {
    const before = (await t.as(t.adminToken, { method: 'GET', url: '/api/authtokens' })).json().count;
    const cases = [
      [{ token_type: 'ROOT' }, 'token_type'],
      [{ name: 'no type' }, 'token_type'],
      [{ token_type: 'USER', name: 42 }, 'name'],
      [{ token_type: 'USER', extra: true }, 'extra'],
      [{ token_type: 'USER', expires_at: 'tomorrow' }, 'expires_at'],
      [{ token_type: 'USER', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
    ] as const;
    for (const [payload, field] of cases) {
      const res = await t.as(t.adminToken, { method: 'POST', url: '/api/authtokens', payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().code).toBe('invalid');
      expect(Object.keys(res.json().errors)).toContain(field);
    }
    const after = (await t.as(t.adminToken, { method: 'GET', url: '/api/authtokens' })).json().count;
    expect(after).toBe(before);
  });

  it('stops honouring an expired token with 401 and WWW-Authenticate', async () => {
    const tok = await t.rt.services.tokens.create(1, {
      token_type: 'USER',
      expires_at: new Date(Date.now() + 1500).toISOString(),
    });
    expect((await t.as(tok.secret_key, { method: 'GET', url: '/api/users/me' })).statusCode).toBe(200);
    // The clock moves on 1.6 s without the test waiting for it.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 1600 });
    try {
      const res = await t.as(tok.secret_key, { method: 'GET', url: '/api/users/me' });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Token');
      expect(res.json().detail).toMatch(/expired/);
      // Expired tokens are not listed as active.
      const list = (
        await t.as(t.adminToken, { method: 'GET', url: '/api/authtokens?page_size=1000' })
      ).json();
      expect(list.results.map((r: { key_id: string }) => r.key_id)).not.toContain(tok.key_id);
    } finally {
      vi.useRealTimers();
    }
  });
});
