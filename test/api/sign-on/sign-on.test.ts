import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import type { Log } from '../../../src/core/log.js';
import { ProviderUnavailable, RelyingParty } from '../../../src/features/sign-on/relying-party.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { loginAtProvider, startProvider, type TestProvider } from '../../helpers/oidc.js';

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
          maxPendingSignIns: 10,
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
    expect(res.json()).toEqual({
      password: true,
      oidc: { label: 'Sign in with Test ID' },
      public_url: PUBLIC_URL,
    });
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
    // Nothing by default (oidc.defaultPermissions): not every dashboard and widget.
    expect(me.permissions).toEqual([]);
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

  it('binds tokens made with a sign-on session to it: they expire with it at the latest', async () => {
    const session = await signIn('sub-alice');
    expect(session.expires_at).not.toBeNull();
    const make = (token: string, body: object) =>
      t.as(token, { method: 'POST', url: '/api/authtokens', payload: { token_type: 'USER', ...body } });
    // Left out, null or later: the session's end.
    const unbounded = await make(session.secret_key, { name: 'cli' });
    expect(unbounded.statusCode, unbounded.body).toBe(201);
    expect(unbounded.json().expires_at).toBe(session.expires_at);
    const never = await make(session.secret_key, { expires_at: null });
    expect(never.json().expires_at).toBe(session.expires_at);
    const later = await make(session.secret_key, {
      expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    });
    expect(later.json().expires_at).toBe(session.expires_at);
    // Sooner stays sooner.
    const sooner = new Date(Date.now() + 3_600_000).toISOString();
    expect((await make(session.secret_key, { expires_at: sooner })).json().expires_at).toBe(sooner);
    // A token made with such a token is bound the same way (no way around it by a chain).
    const chained = await make(unbounded.json().secret_key, { expires_at: null });
    expect(chained.json().expires_at).toBe(session.expires_at);
    // An INGEST token too.
    const ingest = await make(session.secret_key, { token_type: 'INGEST' });
    expect(ingest.json().expires_at).toBe(session.expires_at);
    // Tokens made otherwise (an API token, a password session) are not bound.
    const local = await t.user('tokenmaker');
    expect((await make(local.token, {})).json().expires_at).toBeNull();
  });

  it('joins a provider group to a team of its name (ignoring case) only when the team is marked synced', async () => {
    const team = async (name: string, body: object = {}) => {
      const res = await t.as(t.adminToken, { method: 'POST', url: '/api/teams', payload: { name, ...body } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as { id: number; provider_synced: boolean };
    };
    const ops = await team('ops');
    expect(ops.provider_synced).toBe(false);
    const oncall = await team('oncall');
    const mirrored = await team('mirrored', { provider_synced: true });
    expect(mirrored.provider_synced).toBe(true);
    idp.users.set('sub-dave', { username: 'dave', groups: ['OPS', 'Everyone', 'Mirrored', 'newgroup'] });
    const first = await signIn('sub-dave');
    const me = async (token: string) =>
      teamNames((await t.as(token, { method: 'GET', url: '/api/users/me' })).json().teams);
    // Not `ops` (an admin's team), no look-alike `OPS` or `Everyone` made; a new group makes a synced team.
    expect(await me(first.secret_key)).toEqual(['everyone', 'mirrored', 'newgroup']);
    const all = (await t.as(t.adminToken, { method: 'GET', url: '/api/teams?page_size=100' })).json()
      .results as Array<{ name: string; provider_synced: boolean }>;
    expect(all.filter((x) => x.name.toLowerCase() === 'ops').map((x) => x.name)).toEqual(['ops']);
    expect(all.filter((x) => x.name.toLowerCase() === 'everyone')).toHaveLength(1);
    expect(all.find((x) => x.name === 'newgroup')?.provider_synced).toBe(true);
    // An admin puts dave in a local team and marks `ops` synced.
    const patch = (id: number, payload: object) =>
      t.as(t.adminToken, { method: 'PATCH', url: `/api/teams/${id}`, payload });
    expect((await patch(oncall.id, { members: [first.owner_id] })).statusCode).toBe(200);
    expect((await patch(ops.id, { provider_synced: true })).json().provider_synced).toBe(true);
    const second = await signIn('sub-dave');
    expect(await me(second.secret_key)).toEqual(['everyone', 'mirrored', 'newgroup', 'oncall', 'ops']);
    // Out of every group: out of the synced teams; the local membership stays.
    idp.users.set('sub-dave', { username: 'dave', groups: [] });
    const third = await signIn('sub-dave');
    expect(await me(third.secret_key)).toEqual(['everyone', 'oncall']);
  });

  it('holds sign-on usernames to the local rules: no look-alike of another name, ASCII only', async () => {
    const count = (await users()).length;
    const refusedAs = async (sub: string, username: string, status: number, text: string) => {
      idp.users.set(sub, { username, groups: ['logscope-admins'] });
      const s = await start();
      const res = await callback(await loginAtProvider(s.location, sub), s.cookie);
      expect(res.statusCode, `${username}: ${res.body}`).toBe(status);
      expect(res.body).toContain(text);
      expect(String(res.headers['set-cookie'] ?? '')).not.toContain('logscope_session=');
    };
    // `admin` exists: `ADMIN` is the same name ignoring case.
    await refusedAs('sub-caps', 'ADMIN', 409, 'already exists');
    // A Cyrillic `а`, a trailing space, a space inside: not names here.
    await refusedAs('sub-cyrillic', '\u0430dmin', 401, 'not a valid username');
    await refusedAs('sub-space', 'admin ', 401, 'not a valid username');
    await refusedAs('sub-inner', 'ad min', 401, 'not a valid username');
    expect((await users()).length).toBe(count);
    // A known user renamed at the provider to such a name keeps the name they have.
    idp.users.set('sub-alice', { username: 'alice\u00e9', groups: ['web'] });
    const session = await signIn('sub-alice');
    expect((await t.as(session.secret_key, { method: 'GET', url: '/api/users/me' })).json().username).toBe(
      'alice.smith',
    );
    idp.users.set('sub-alice', { username: 'alice.smith', groups: ['web'] });
    // Locally too: a name that differs from another only by case is taken.
    const dup = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/users',
      payload: { username: 'Admin', password: 'a-long-password' },
    });
    expect(dup.statusCode).toBe(409);
  });

  it('refuses a disabled user at sign-in as a wrong password, and signs them in again once enabled', async () => {
    idp.users.set('sub-erin', { username: 'erin', groups: [] });
    const session = await signIn('sub-erin');
    const disable = (disabled: boolean) =>
      t.as(t.adminToken, { method: 'PATCH', url: `/api/users/${session.owner_id}`, payload: { disabled } });
    const off = await disable(true);
    expect(off.statusCode, off.body).toBe(200);
    expect(off.json().disabled).toBe(true);
    expect((await t.as(session.secret_key, { method: 'GET', url: '/api/users/me' })).statusCode).toBe(401);
    const s = await start();
    const res = await callback(await loginAtProvider(s.location, 'sub-erin'), s.cookie);
    expect(res.statusCode).toBe(401);
    expect(res.body).toContain('Invalid username or password.');
    expect(String(res.headers['set-cookie'] ?? '')).not.toContain('logscope_session=');
    expect((await disable(false)).json().disabled).toBe(false);
    const again = await signIn('sub-erin');
    expect((await t.as(again.secret_key, { method: 'GET', url: '/api/users/me' })).statusCode).toBe(200);
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

  it('keeps at most maxPendingSignIns sign-ins under way, and asks the provider for its document once', async () => {
    const discoveries = () =>
      idp.requests.filter((r) => r.url.startsWith('/.well-known/openid-configuration')).length;
    const before = discoveries();
    const pending = async () =>
      Number(
        (
          await t.rt.meta.db
            .selectFrom('oidc_sign_ins')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    for (let i = 0; i < 40; i++) expect((await start()).res.statusCode).toBe(302);
    expect(await pending()).toBeLessThanOrEqual(10);
    expect(discoveries()).toBe(before);
    // The newest sign-ins still finish.
    const s = await start();
    const cb = await callback(await loginAtProvider(s.location, 'sub-alice'), s.cookie);
    expect(cb.statusCode, cb.body).toBe(302);
    expect(discoveries()).toBe(before);
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
          defaultPermissions: ['manage_tasks'],
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
    expect(methods).toEqual({
      password: false,
      oidc: { label: 'Sign in with single sign-on' },
      public_url: PUBLIC_URL,
    });
    const bob = await t.user('bob');
    const login = (username: string, password: string) =>
      t.as(null, { method: 'POST', url: '/api/auth/login', payload: { username, password } });
    // A correct password gets the answer a wrong one gets: it tells nothing.
    const right = await login('bob', 'bob-password');
    const wrong = await login('bob', 'not-bobs-password');
    expect(right.statusCode).toBe(401);
    expect(right.json()).toEqual(wrong.json());
    expect(right.json().detail).toBe('Invalid username or password.');
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
    // Discovery is tried again after a wait (1 s, doubling), not at every start.
    const res = await eventually(
      'a sign-in sent to the provider',
      async () => {
        const r = await t.as(null, { method: 'GET', url: '/api/auth/oidc/login' });
        return String(r.headers.location).startsWith(idp?.issuer ?? '-') && r;
      },
      { everyMs: 200 },
    );
    const back = await loginAtProvider(String(res.headers.location), 'sub-carol');
    const cb = await t.as(null, {
      method: 'GET',
      url: back.pathname + back.search,
      headers: { cookie: `logscope_sign_in=${cookieOf(res.headers['set-cookie'], 'logscope_sign_in')}` },
    });
    expect(cb.statusCode, cb.body).toBe(302);
    expect(log.lines.some((l) => l.includes('answers again'))).toBe(true);
    // oidc.defaultPermissions: what a user it creates may do.
    const carol = (await t.as(t.adminToken, { method: 'GET', url: '/api/users?page_size=100' }))
      .json()
      .results.find((u: { username: string }) => u.username === 'carol');
    expect(carol.permissions).toEqual(['manage_tasks']);
  });
});

describe("the provider's discovery document", () => {
  it('is read again after a failure only after a wait that doubles, never at every sign-in', async () => {
    let asked = 0;
    const server = createServer((_req, res) => {
      asked += 1;
      res.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const settings = loadConfig({
      env: { LOGSCOPE_OIDC: JSON.stringify({ issuer, clientId: 'logscope', clientSecret: 'secret' }) },
    }).oidc;
    let now = 1_000_000;
    const rp = new RelyingParty(settings!, capturingLog(), () => now);
    try {
      const attempt = () => expect(rp.provider()).rejects.toBeInstanceOf(ProviderUnavailable);
      await attempt();
      expect(asked).toBe(1);
      for (let i = 0; i < 5; i++) await attempt();
      expect(asked).toBe(1);
      now += 1_001;
      await attempt();
      expect(asked).toBe(2);
      now += 1_500;
      await attempt();
      expect(asked).toBe(2);
      now += 600;
      await attempt();
      expect(asked).toBe(3);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
