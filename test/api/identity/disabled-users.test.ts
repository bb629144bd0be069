import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_EVENT } from '../../../src/event-store/read-scope.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { Client, closedWithin, is } from '../../helpers/ws-client.js';

/**
 * An admin disables a user (`PATCH /api/users/{id}` `{"disabled": true}`): every token of
 * theirs goes at once (sessions, API and INGEST tokens), their live connections close
 * with 4401, their sign-ins are refused as a wrong password is, and what they own reads
 * nothing; enabled again, they sign in again (their old tokens stay gone).
 */
describe(`disabling a user on ${BACKEND}`, () => {
  let t: TestApp;
  let url: string;
  beforeAll(async () => {
    // Long token cache and re-check period: the disabling itself must end things, not a timer.
    t = await createTestApp({ LOGSCOPE_TOKEN_CACHE_SECONDS: '60' });
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `${address.replace('http', 'ws')}/ws/live-updates`;
  });
  afterAll(() => t?.close());

  const login = (username: string, password: string) =>
    t.as(null, { method: 'POST', url: '/api/auth/login', payload: { username, password } });
  const patch = (token: string, id: number, payload: object) =>
    t.as(token, { method: 'PATCH', url: `/api/users/${id}`, payload });

  it('ends every token and live connection of the user at once, and refuses their password', async () => {
    const vic = await t.user('victor');
    const session = (await login('victor', 'victor-password')).json().secret_key as string;
    const ingest = await t.rt.services.tokens.create(vic.id, { token_type: 'INGEST' });
    // Used once: each identity is cached (for a minute here).
    for (const token of [vic.token, session])
      expect((await t.as(token, { method: 'GET', url: '/api/users/me' })).statusCode).toBe(200);
    const send = () =>
      t.as(ingest.secret_key, { method: 'POST', url: '/api/ingest', payload: { message: 'from victor' } });
    expect((await send()).statusCode).toBe(200);
    const c = await Client.open(`${url}?token=${vic.token}`);
    c.send(['ping', {}]);
    await c.next(is('pong'));

    const res = await patch(t.adminToken, vic.id, { disabled: true });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: vic.id, disabled: true });

    expect(await closedWithin(c, 3000)).toBe(4401);
    for (const token of [vic.token, session])
      expect((await t.as(token, { method: 'GET', url: '/api/users/me' })).statusCode).toBe(401);
    expect((await send()).statusCode).toBe(401);
    const all = await t.as(t.adminToken, {
      method: 'GET',
      url: '/api/authtokens?show_all=true&page_size=1000',
    });
    expect(all.json().results.filter((x: { owner_id: number }) => x.owner_id === vic.id)).toEqual([]);
    // A websocket with a token of theirs is refused before any frame.
    await expect(Client.open(`${url}?token=${vic.token}`)).rejects.toThrow(/401/);

    // The right password gets the answer a wrong one gets.
    const right = await login('victor', 'victor-password');
    const wrong = await login('victor', 'not-victors-password');
    expect(right.statusCode).toBe(401);
    expect(right.json()).toEqual(wrong.json());
    // A token made for them anyway (the CLI) is refused while they are disabled.
    const made = await t.rt.services.tokens.create(vic.id, { token_type: 'USER' });
    expect((await t.as(made.secret_key, { method: 'GET', url: '/api/users/me' })).statusCode).toBe(401);
    // What they own (triggers, reports) reads nothing.
    expect(await t.rt.services.readScopes.ofUser(vic.id)).toEqual(NO_EVENT);

    // Enabled again: they sign in again; the old tokens stay gone.
    const back = await patch(t.adminToken, vic.id, { disabled: false });
    expect(back.json().disabled).toBe(false);
    expect((await login('victor', 'victor-password')).statusCode).toBe(200);
    expect((await t.as(vic.token, { method: 'GET', url: '/api/users/me' })).statusCode).toBe(401);
  });

  it('is for admins only, and never for oneself', async () => {
    const other = await t.user('olga');
    const lead = await t.user('lead', { permissions: ['manage_tokens'] });
    const denied = await patch(lead.token, other.id, { disabled: true });
    expect(denied.statusCode).toBe(403);
    const admin = (await t.as(t.adminToken, { method: 'GET', url: '/api/users/me' })).json();
    const self = await patch(t.adminToken, admin.id, { disabled: true });
    expect(self.statusCode).toBe(409);
    expect(self.json().detail).toBe('You cannot disable yourself.');
    expect((await t.as(t.adminToken, { method: 'GET', url: '/api/users/me' })).json().disabled).toBe(false);
    expect((await t.as(other.token, { method: 'GET', url: '/api/users/me' })).json().disabled).toBe(false);
    expect((await patch(t.adminToken, other.id, { disabled: 'yes please' })).statusCode).toBe(400);
  });
});
