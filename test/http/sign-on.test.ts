import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Log } from '../../src/core/log.js';
import { BACKEND, createTestApp, type TestApp } from '../helpers/app.js';
import { loginAtProvider, startProvider, type TestProvider } from '../helpers/oidc.js';

/** Where Logscope says it is reached (the tests talk to it in process; nothing listens there). */
const PUBLIC_URL = 'http://127.0.0.1:18080';
const REDIRECT_URI = `${PUBLIC_URL}/api/auth/oidc/callback`;

/** A log that keeps every line, to look for secrets in it. */
function capturingLog(): Log & { lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (detail: object, message: string) =>
    void lines.push(`${level} ${message} ${JSON.stringify(detail)}`);
  return { lines, error: keep('error'), warn: keep('warn'), info: keep('info') };
}

const cookieOf = (setCookie: string | string[] | undefined, name: string): string | undefined => {
  for (const line of [setCookie ?? []].flat()) {
    const m = new RegExp(`^${name}=([^;]*)`).exec(line);
    if (m) return m[1];
  }
  return undefined;
};

/**
 * Single sign-on against a real OpenID provider (`oidc-provider`, on loopback): users
 * created at their first sign-in, groups to teams and admin rights at every sign-in,
 * identity by (`iss`, `sub`), every forged or replayed answer refused with nothing created,
 * no token in any URL, log line or request to the provider, and a provider that does not
 * answer stopping nothing.
 */
describe(`single sign-on with an OpenID provider on ${BACKEND}`, () => {
  let idp: TestProvider;
  let t: TestApp;
  const log = capturingLog();
  /** Every URL the browser was sent to, and every token secret handed out. */
  const locations: string[] = [];
  const secrets: string[] = [];

  const users = async () =>
    (await t.as(t.adminToken, { method: 'GET', url: '/api/users?page_size=100' })).json().results as Array<{
      id: number;
      username: string;
      is_admin: boolean;
      teams: number[];
      sso: boolean;
    }>;
  const teamNames = async (ids: number[]) => {
    const all = (await t.as(t.adminToken, { method: 'GET', url: '/api/teams?page_size=100' })).json()
      .results as Array<{ id: number; name: string }>;
    return all
      .filter((x) => ids.includes(x.id))
      .map((x) => x.name)
      .sort();
  };

  /** Starts a sign-in as a browser: the redirect to the provider and the browser's cookie. */
  const start = async (next = '/search') => {
    const res = await t.as(null, {
      method: 'GET',
      url: `/api/auth/oidc/login?next=${encodeURIComponent(next)}`,
    });
    const location = String(res.headers.location ?? '');
    locations.push(location);
    return { res, location, cookie: cookieOf(res.headers['set-cookie'], 'logscope_sign_in') };
  };
  const callback = async (back: URL, cookie: string | undefined) => {
    const res = await t.as(null, {
      method: 'GET',
      url: back.pathname + back.search,
      headers: cookie ? { cookie: `logscope_sign_in=${cookie}` } : {},
    });
    locations.push(String(res.headers.location ?? ''));
    return res;
  };
  /** A whole sign-in: provider login as `sub`, the callback, the web UI taking its token. */
  const signIn = async (sub: string, next = '/search') => {
    const s = await start(next);
    expect(s.res.statusCode, s.res.body).toBe(302);
    const back = await loginAtProvider(s.location, sub);
    locations.push(back.href);
    const cb = await callback(back, s.cookie);
    expect(cb.statusCode, cb.body).toBe(302);
    expect(cb.headers.location).toBe(`/login?sso=done&next=${encodeURIComponent(next)}`);
    const handoff = cookieOf(cb.headers['set-cookie'], 'logscope_session');
    const session = await t.as(null, {
      method: 'POST',
      url: '/api/auth/oidc/session',
      headers: { cookie: `logscope_session=${handoff}` },
    });
    expect(session.statusCode, session.body).toBe(200);
    const token = session.json() as { secret_key: string; owner_id: number; expires_at: string | null };
    secrets.push(token.secret_key);
    return token;
  };

  beforeAll(async () => {
    idp = await startProvider(REDIRECT_URI);
    idp.users.set('sub-alice', { username: 'alice', groups: ['payments', 'web'] });
    t = await createTestApp(
      {
        LOGSCOPE_PUBLIC_URL: PUBLIC_URL,
        LOGSCOPE_OIDC: JSON.stringify({
          issuer: idp.issuer,
          clientId: idp.clientId,
          clientSecret: idp.clientSecret,
          adminGroups: ['logscope-admins'],
          label: 'Sign in with Test ID',
        }),
      },
      { log },
    );
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  it('tells the sign-in page both methods', async () => {
    const res = await t.as(null, { method: 'GET', url: '/api/auth/methods' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ password: true, oidc: { label: 'Sign in with Test ID' } });
  });

  it('asks the provider with PKCE, state, nonce and the groups scope it offers', async () => {
    const { res, location, cookie } = await start('/dashboards');
    expect(res.statusCode).toBe(302);
    const url = new URL(location);
    expect(url.origin).toBe(idp.issuer);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get('state')).toBeTruthy();
    expect(url.searchParams.get('nonce')).toBeTruthy();
    expect(url.searchParams.get('redirect_uri')).toBe(REDIRECT_URI);
    expect(url.searchParams.get('scope')?.split(' ')).toEqual(['openid', 'profile', 'email', 'groups']);
    // The browser's key is a cookie only the callback path gets, not readable by scripts.
    const line = [res.headers['set-cookie'] ?? []].flat().find((c) => c.startsWith('logscope_sign_in='));
    expect(line).toMatch(/HttpOnly/i);
    expect(line).toMatch(/SameSite=Lax/i);
    expect(line).toMatch(/Path=\/api\/auth\/oidc/);
    expect(cookie).toBeTruthy();
  });

  it('creates the user at the first sign-in, with teams from the groups, and returns to the page asked for', async () => {
    const token = await signIn('sub-alice', '/dashboards/3?tab=widgets');
    const me = (await t.as(token.secret_key, { method: 'GET', url: '/api/users/me' })).json();
    expect(me.username).toBe('alice');
    expect(me.is_admin).toBe(false);
    expect(me.sso).toBe(true);
    expect(await teamNames(me.teams)).toEqual(['everyone', 'payments', 'web']);
    expect(token.expires_at).not.toBeNull();
    // The session token works where a password sign-in's does.
    expect((await t.as(token.secret_key, { method: 'GET', url: '/api/streams' })).statusCode).toBe(200);
  });

  it('takes groups and admin rights from the provider again at every sign-in; the account is the same', async () => {
    const before = (await users()).find((u) => u.username === 'alice');
    idp.users.set('sub-alice', { username: 'alice', groups: ['web', 'logscope-admins'] });
    const token = await signIn('sub-alice');
    const me = (await t.as(token.secret_key, { method: 'GET', url: '/api/users/me' })).json();
    expect(me.id).toBe(before?.id);
    expect(me.is_admin).toBe(true);
    expect(await teamNames(me.teams)).toEqual(['everyone', 'logscope-admins', 'web']);
    // Out of the admin group: no longer an admin.
    idp.users.set('sub-alice', { username: 'alice', groups: ['web'] });
    const again = await signIn('sub-alice');
    const after = (await t.as(again.secret_key, { method: 'GET', url: '/api/users/me' })).json();
    expect(after.is_admin).toBe(false);
    expect(await teamNames(after.teams)).toEqual(['everyone', 'web']);
  });

  it('keeps the account of a user renamed at the provider (identity is iss and sub, not the name)', async () => {
    const id = (await users()).find((u) => u.username === 'alice')?.id;
    idp.users.set('sub-alice', { username: 'alice.smith', groups: ['web'] });
    const token = await signIn('sub-alice');
    const me = (await t.as(token.secret_key, { method: 'GET', url: '/api/users/me' })).json();
    expect(me.id).toBe(id);
    expect(me.username).toBe('alice.smith');
  });

  it('never links a first sign-in to a local account of the same name', async () => {
    idp.users.set('sub-impostor', { username: 'admin', groups: ['logscope-admins'] });
    const count = (await users()).length;
    const s = await start();
    const back = await loginAtProvider(s.location, 'sub-impostor');
    const res = await callback(back, s.cookie);
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toContain('already exists');
    expect(res.headers['set-cookie']).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/^logscope_session=/)]),
    );
    expect((await users()).length).toBe(count);
  });

  describe('refuses forged and replayed answers with a 401, creating nothing', () => {
    let n = 0;
    /** A new provider user per case, so "nothing created" is checked by name. */
    const attempt = async (
      tamper: (
        back: URL,
        cookie: string | undefined,
      ) => Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }>,
      reason: RegExp,
    ) => {
      n += 1;
      const name = `mallory${n}`;
      idp.users.set(`sub-${name}`, { username: name, groups: ['attackers'] });
      const s = await start();
      const back = await loginAtProvider(s.location, `sub-${name}`);
      const res = await tamper(back, s.cookie);
      idp.forge = null;
      expect(res.statusCode, res.body).toBe(401);
      expect(res.body.replace(/&#34;/g, '"')).toMatch(reason);
      expect(String(res.headers['set-cookie'] ?? '')).not.toContain('logscope_session=');
      const all = await users();
      expect(all.map((u) => u.username)).not.toContain(name);
      const teams = (await t.as(t.adminToken, { method: 'GET', url: '/api/teams?page_size=100' })).json()
        .results;
      expect(teams.map((x: { name: string }) => x.name)).not.toContain('attackers');
      return res;
    };

    it('a wrong state', async () => {
      await attempt((back, cookie) => {
        back.searchParams.set('state', 'not-the-state');
        return callback(back, cookie);
      }, /does not belong to the sign-in this browser started/);
    });
    it('an answer brought by another browser (no cookie, or another sign-in’s)', async () => {
      await attempt((back) => callback(back, undefined), /did not start a sign-in/);
      const other = await start();
      await attempt((back) => callback(back, other.cookie), /does not belong to the sign-in/);
    });
    it('a replayed callback (the code used once already)', async () => {
      idp.users.set('sub-replay', { username: 'replayer', groups: [] });
      const s = await start();
      const back = await loginAtProvider(s.location, 'sub-replay');
      expect((await callback(back, s.cookie)).statusCode).toBe(302);
      const again = await callback(back, s.cookie);
      expect(again.statusCode).toBe(401);
      expect(again.body).toContain('was used already');
      expect(String(again.headers['set-cookie'] ?? '')).not.toContain('logscope_session=');
    });
    it('an ID token signed by another key', async () => {
      await attempt((back, cookie) => {
        idp.forge = 'other-key';
        return callback(back, cookie);
      }, /signature verification failed/);
    });
    it('an ID token for another audience', async () => {
      await attempt((back, cookie) => {
        idp.forge = 'wrong-audience';
        return callback(back, cookie);
      }, /"aud"/);
    });
    it('an expired ID token', async () => {
      await attempt((back, cookie) => {
        idp.forge = 'expired';
        return callback(back, cookie);
      }, /"exp"/);
    });
    it('an ID token without its nonce', async () => {
      await attempt((back, cookie) => {
        idp.forge = 'no-nonce';
        return callback(back, cookie);
      }, /"nonce".*missing/);
    });
    it('the provider refusing (the user cancelled)', async () => {
      const s = await start();
      const state = new URL(s.location).searchParams.get('state') ?? '';
      const res = await callback(new URL(`${REDIRECT_URI}?error=access_denied&state=${state}`), s.cookie);
      expect(res.statusCode).toBe(401);
      expect(res.body).toContain('access_denied');
    });
  });

  it('records sign-ins with the provider, and refusals, in the audit trail', async () => {
    await t.rt.services.audit.flush();
    const res = await t.as(t.adminToken, {
      method: 'GET',
      url: '/api/audit?action=auth.login&page_size=1000',
    });
    const records = res.json().results as Array<{
      actor: { username: string | null; token_key_id: string | null; address: string | null };
      detail: { method?: string };
      outcome: string;
    }>;
    const sso = records.filter((r) => r.detail.method === 'oidc');
    expect(sso.filter((r) => r.outcome === 'ok').map((r) => r.actor.username)).toContain('alice.smith');
    expect(sso.some((r) => r.outcome === 'denied')).toBe(true);
    for (const r of sso.filter((x) => x.outcome === 'ok')) {
      expect(r.actor.token_key_id).toBeTruthy();
      expect(r.actor.address).toBeTruthy();
    }
  });

  it('puts no token in any URL, server log line or request to the provider', async () => {
    expect(secrets.length).toBeGreaterThanOrEqual(4);
    const providerTraffic = idp.requests.map((r) => `${r.method} ${r.url} ${r.headers} ${r.body}`).join('\n');
    const logText = log.lines.join('\n');
    for (const secret of secrets) {
      const keyId = secret.split('_')[0] ?? '';
      expect(keyId.length).toBeGreaterThan(4);
      for (const url of locations) expect(url).not.toContain(secret);
      expect(providerTraffic).not.toContain(secret);
      expect(logText).not.toContain(secret);
    }
    // The provider was asked: discovery, its keys, and each sign-in's token exchange.
    expect(providerTraffic).toContain('/.well-known/openid-configuration');
    expect(providerTraffic).toMatch(/POST \/token/);
  });
});

describe(`single sign-on when the provider does not answer, and password sign-in turned off, on ${BACKEND}`, () => {
  let idp: TestProvider | undefined;
  let t: TestApp;
  const log = capturingLog();
  let port = 0;

  beforeAll(async () => {
    // A port nothing listens on yet: the provider starts later.
    const probe = await startProvider(REDIRECT_URI);
    port = Number(new URL(probe.issuer).port);
    await probe.close();
    t = await createTestApp(
      {
        LOGSCOPE_PUBLIC_URL: PUBLIC_URL,
        LOGSCOPE_OIDC: JSON.stringify({
          issuer: `http://127.0.0.1:${port}`,
          clientId: 'logscope',
          clientSecret: 'a-client-secret-long-enough-for-hs256-0123456789',
          passwordLogin: false,
        }),
      },
      { log },
    );
  });
  afterAll(async () => {
    await t?.close();
    await idp?.close();
  });

  it('starts anyway, warns once, and sends a sign-in back to the sign-in page with a clear error', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await t.as(null, { method: 'GET', url: '/api/auth/oidc/login?next=/tasks' });
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe('/login?sso_error=unavailable&next=%2Ftasks');
    }
    expect(log.lines.filter((l) => l.startsWith('warn') && l.includes('does not answer')).length).toBe(1);
    expect((await t.as(t.adminToken, { method: 'GET', url: '/api/users/me' })).statusCode).toBe(200);
  });

  it('refuses password sign-in but for break-glass accounts', async () => {
    const methods = (await t.as(null, { method: 'GET', url: '/api/auth/methods' })).json();
    expect(methods).toEqual({ password: false, oidc: { label: 'Sign in with single sign-on' } });
    const bob = await t.user('bob');
    const login = (username: string, password: string) =>
      t.as(null, { method: 'POST', url: '/api/auth/login', payload: { username, password } });
    expect((await login('bob', 'bob-password')).statusCode).toBe(401);
    const patched = await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/users/${bob.id}`,
      payload: { local_login: true },
    });
    expect(patched.json().local_login).toBe(true);
    expect((await login('bob', 'bob-password')).statusCode).toBe(200);
    expect((await login('bob', 'wrong-password')).statusCode).toBe(401);
  });

  it('signs in with the provider by itself once it answers', async () => {
    idp = await startProvider(REDIRECT_URI, port);
    idp.users.set('sub-carol', { username: 'carol', groups: [] });
    const res = await t.as(null, { method: 'GET', url: '/api/auth/oidc/login' });
    expect(res.statusCode).toBe(302);
    const back = await loginAtProvider(String(res.headers.location), 'sub-carol');
    const cb = await t.as(null, {
      method: 'GET',
      url: back.pathname + back.search,
      headers: { cookie: `logscope_sign_in=${cookieOf(res.headers['set-cookie'], 'logscope_sign_in')}` },
    });
    expect(cb.statusCode, cb.body).toBe(302);
    expect(log.lines.some((l) => l.includes('answers again'))).toBe(true);
  });
});
