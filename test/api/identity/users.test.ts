import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

describe(`users and login on ${BACKEND}`, () => {
  let t: TestApp;
  let dave: { id: number; token: string };
  beforeAll(async () => {
    t = await createTestApp();
    dave = await t.user('dave');
  });
  afterAll(() => t.close());

  it('tells any user who they are', async () => {
    const me = await t.as(dave.token, { method: 'GET', url: '/api/users/me' });
    expect(me.json()).toMatchObject({ id: dave.id, username: 'dave', is_admin: false, permissions: [] });
    expect(me.json()).not.toHaveProperty('password_hash');
    const admin = (await t.as(t.adminToken, { method: 'GET', url: '/api/users/me' })).json();
    expect(admin).toMatchObject({ username: 'admin', is_admin: true });
    expect(admin.permissions).toContain('manage_tokens');
  });

  it('says in the API document which permissions are admin-level', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/schema' })).json();
    const permissions = JSON.stringify(doc.components.schemas.User.properties.permissions);
    expect(permissions).toMatch(/Admin-level \(manage_pipelines, manage_streams\)/);
  });

  it('lets admins create, read, change and delete users', async () => {
    const created = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/users',
      payload: { username: 'erin', password: 'correct horse', permissions: ['manage_widgets'] },
    });
    expect(created.statusCode).toBe(201);
    const id = created.json().id;
    expect((await t.as(t.adminToken, { method: 'GET', url: `/api/users/${id}` })).json().username).toBe(
      'erin',
    );
    const patched = await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/users/${id}`,
      payload: { permissions: ['manage_tasks', 'manage_dashboards'] },
    });
    expect(patched.json().permissions).toEqual(['manage_dashboards', 'manage_tasks']);
    const list = (await t.as(t.adminToken, { method: 'GET', url: '/api/users?ordering=-username' })).json();
    expect(list.results.map((u: { username: string }) => u.username)).toEqual(['erin', 'dave', 'admin']);
    expect((await t.as(t.adminToken, { method: 'DELETE', url: `/api/users/${id}` })).statusCode).toBe(204);
    expect((await t.as(t.adminToken, { method: 'GET', url: `/api/users/${id}` })).statusCode).toBe(404);
  });

  it('refuses user management to non-admins', async () => {
    for (const [method, url] of [
      ['GET', '/api/users'],
      ['GET', '/api/users/1'],
      ['PATCH', '/api/users/1'],
      ['DELETE', '/api/users/1'],
      ['POST', '/api/users'],
    ] as const) {
      const res = await t.as(dave.token, {
        method,
        url,
        ...(method === 'PATCH' || method === 'POST' ? { payload: { username: 'x1' } } : {}),
      });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
    }
  });

  it('rejects bad user input', async () => {
    const dup = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/users',
      payload: { username: 'dave' },
    });
    expect(dup.statusCode).toBe(409);
    const cases = [
      [{ username: '' }, 'username'],
      [{ username: 'has space' }, 'username'],
      [{ username: 'x', password: 'short' }, 'password'],
      [{ username: 'x', permissions: ['root'] }, 'permissions.0'],
      [{ username: 'x', is_admin: 'yes' }, 'is_admin'],
      [{ username: 'x', color: 'red' }, 'color'],
    ] as const;
    for (const [payload, field] of cases) {
      const res = await t.as(t.adminToken, { method: 'POST', url: '/api/users', payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(Object.keys(res.json().errors)).toContain(field);
    }
    expect((await t.as(t.adminToken, { method: 'GET', url: '/api/users/999' })).statusCode).toBe(404);
    expect((await t.as(t.adminToken, { method: 'GET', url: '/api/users/abc' })).statusCode).toBe(400);
    expect((await t.as(t.adminToken, { method: 'DELETE', url: '/api/users/1' })).statusCode).toBe(409);
  });

  it('logs in with a password and returns a working USER token', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'dave', password: 'dave-password' },
    });
    expect(res.statusCode).toBe(200);
    const tok = res.json();
    expect(tok.token_type).toBe('USER');
    expect(tok.owner_id).toBe(dave.id);
    const me = await t.as(tok.secret_key, { method: 'GET', url: '/api/users/me' });
    expect(me.json().username).toBe('dave');
    for (const payload of [
      { username: 'dave', password: 'wrong' },
      { username: 'nobody', password: 'dave-password' },
    ]) {
      const bad = await t.app.inject({ method: 'POST', url: '/api/auth/login', payload });
      expect(bad.statusCode).toBe(401);
      expect(bad.headers['www-authenticate']).toBe('Token');
    }
    const missing = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'dave' },
    });
    expect(missing.statusCode).toBe(400);
  });

  it("applies a permission change to the user's existing tokens", async () => {
    const frank = await t.user('frank');
    const before = (await t.as(frank.token, { method: 'GET', url: '/api/authtokens?show_all=true' })).json()
      .count;
    expect(before).toBe(1);
    await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/users/${frank.id}`,
      payload: { permissions: ['manage_tokens'] },
    });
    const after = (await t.as(frank.token, { method: 'GET', url: '/api/authtokens?show_all=true' })).json()
      .count;
    expect(after).toBeGreaterThan(1);
  });
});

describe(`login throttling on ${BACKEND}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_LOGIN_FAILURES_PER_USERNAME: '3' });
    await t.user('gina');
    await t.user('hank');
  });
  afterAll(() => t.close());

  const login = (password: string, ip = '10.9.9.9', username = 'gina') =>
    t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      remoteAddress: ip,
      payload: { username, password },
    });

  it('answers 429 with Retry-After past the failed attempts per username and minute', async () => {
    for (let i = 0; i < 3; i++) expect((await login('wrong')).statusCode).toBe(401);
    const throttled = await login('gina-password');
    expect(throttled.statusCode).toBe(429);
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    expect(throttled.json()).toMatchObject({
      code: 'throttled',
      detail: expect.stringMatching(/login attempts/),
    });
    // The username is throttled from any address; another username is not.
    expect((await login('gina-password', '10.9.9.10')).statusCode).toBe(429);
    expect((await login('hank-password', '10.9.9.9', 'hank')).statusCode).toBe(200);
    for (let i = 0; i < 5; i++)
      expect((await t.as(t.adminToken, { method: 'GET', url: '/api/users/me' })).statusCode).toBe(200);
  });
});
