import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { HOUR, seedWeb } from '../../helpers/seed.js';
import { Client, closedWithin, is } from '../../helpers/ws-client.js';

describe(`live connections follow rights on ${BACKEND}`, () => {
  let t: TestApp;
  let url: string;
  let bob: { id: number; token: string };
  let dashboardId: number;
  let widgetId: number;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_TOKEN_CACHE_SECONDS: '1' });
    await seedWeb(t);
    bob = await t.user('bob', { permissions: ['manage_dashboards', 'manage_widgets'] });
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `${address.replace('http', 'ws')}/ws/live-updates`;
    const dash = await t.as(bob.token, {
      method: 'POST',
      url: '/api/dashboards',
      payload: {
        title: "Bob's board",
        widgets: [{ title: 'Hosts', query: { type: 'TopN', params: { time_range: HOUR, field: 'host' } } }],
      },
    });
    expect(dash.statusCode, dash.body).toBe(201);
    dashboardId = dash.json().id;
    widgetId = dash.json().widgets[0].id;
  });
  afterAll(() => t.close());

  const subscribed = async (c: Client, target: object) => {
    c.send(['subscribe', target]);
    const m = await c.next(is('subscribed'));
    expect(m[1].target).toEqual(target);
  };

  it('closes with 4401 when the token is deleted', async () => {
    const u = await t.user('tina');
    const c = await Client.open(`${url}?token=${u.token}`);
    const del = await t.as(u.token, { method: 'DELETE', url: `/api/authtokens/${u.token}` });
    expect(del.statusCode).toBe(204);
    expect(await closedWithin(c, 3000)).toBe(4401);
  });

  it('closes with 4401 when the token expires', async () => {
    const u = await t.user('ed');
    const token = await t.rt.services.tokens.create(u.id, {
      token_type: 'USER',
      expires_at: new Date(Date.now() + 1500).toISOString(),
    });
    const c = await Client.open(`${url}?token=${token.secret_key}`);
    c.send(['ping', {}]);
    await c.next(is('pong'));
    expect(await closedWithin(c, 4000)).toBe(4401);
  });

  it('closes with 4401 when the user is deleted', async () => {
    const u = await t.user('uma');
    const c = await Client.open(`${url}?token=${u.token}`);
    expect((await t.as(t.adminToken, { method: 'DELETE', url: `/api/users/${u.id}` })).statusCode).toBe(204);
    expect(await closedWithin(c, 3000)).toBe(4401);
  });

  it('finds a token deleted by another process (no in-process hint) within tokenCacheSeconds', async () => {
    const u = await t.user('otto');
    const c = await Client.open(`${url}?token=${u.token}`);
    // Straight in the shared metadata store, as another node of a cluster would.
    await t.rt.meta.db
      .deleteFrom('auth_tokens')
      .where('key_id', '=', u.token.split('_')[0] as string)
      .execute();
    expect(await closedWithin(c, 3000)).toBe(4401);
  });

  it('ends subscriptions a demoted admin may no longer see, keeping the connection', async () => {
    const ada = await t.user('ada', { admin: true });
    const own = (
      await t.as(ada.token, {
        method: 'POST',
        url: '/api/query',
        payload: { type: 'TopN', params: { time_range: HOUR, field: 'app' } },
      })
    ).json();
    const c = await Client.open(`${url}?token=${ada.token}`);
    await subscribed(c, { dashboard_id: dashboardId });
    await subscribed(c, { widget_id: widgetId });
    await subscribed(c, { query_id: own.query_id });
    const demote = await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/users/${ada.id}`,
      payload: { is_admin: false },
    });
    expect(demote.statusCode).toBe(200);
    const errors = [await c.next(is('error'), 3000), await c.next(is('error'), 3000)];
    expect(errors.map((e) => e[1].target)).toEqual(
      expect.arrayContaining([{ dashboard_id: dashboardId }, { widget_id: widgetId }]),
    );
    for (const e of errors) expect(e[1].detail).toMatch(/no longer/);
    const last = (await c.next(is('unsubscribed'))) && (await c.next(is('unsubscribed')));
    expect(last[1].subscriptions).toEqual([{ query_id: own.query_id }]);
    // Still connected, and new subscriptions follow the new rights.
    c.send(['ping', {}]);
    await c.next(is('pong'));
    c.send(['subscribe', { dashboard_id: dashboardId }]);
    expect((await c.next(is('error')))[1].command).toBe('subscribe');
    c.ws.close();
  });

  it('ends a subscription when the permission that allowed it is removed', async () => {
    const wendy = await t.user('wendy', { permissions: ['manage_widgets', 'manage_dashboards'] });
    const c = await Client.open(`${url}?token=${wendy.token}`);
    await subscribed(c, { widget_id: widgetId });
    await subscribed(c, { dashboard_id: dashboardId });
    // Without manage_dashboards the dashboard is gone; the widget stays (manage_widgets).
    await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/users/${wendy.id}`,
      payload: { permissions: ['manage_widgets'] },
    });
    const err = await c.next(is('error'), 3000);
    expect(err[1]).toMatchObject({ target: { dashboard_id: dashboardId }, command: 'subscribe' });
    expect((await c.next(is('unsubscribed')))[1].subscriptions).toEqual([{ widget_id: widgetId }]);
    // Rights changed behind the service's back (another node): found by the periodic re-check.
    await t.rt.meta.db.updateTable('users').set({ permissions: '[]' }).where('id', '=', wendy.id).execute();
    const err2 = await c.next(is('error'), 3000);
    expect(err2[1].target).toEqual({ widget_id: widgetId });
    expect(c.ws.readyState).toBe(c.ws.OPEN);
    c.ws.close();
  });
});
