import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { Client, is, type Msg } from '../../helpers/ws-client.js';

type Who = { id: number; token: string };

/**
 * A widget's query is shared by the viewers who may read the same events, and only by
 * them (ADR 0013): viewers in one reader set get one computation; another set, another
 * one; a viewer whose set changes stops getting the shared one.
 */
describe(`widgets shared by read scope (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  let url: string;
  let dashboardId: number;
  let team: number;
  const viewers: Who[] = [];
  let outsider: Who;

  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_TOKEN_CACHE_SECONDS: '1' });
    for (const name of ['vera', 'vic', 'val'])
      viewers.push(await t.user(name, { permissions: ['manage_dashboards'] }));
    outsider = await t.user('otto', { permissions: ['manage_dashboards'] });
    const as = (method: 'POST' | 'PATCH', path: string, payload: object) =>
      t.as(t.adminToken, { method, url: path, payload });
    team = (await as('POST', '/api/teams', { name: 'ops', members: viewers.map((v) => v.id) })).json().id;
    const stream = await as('POST', '/api/streams', {
      title: 'Ops',
      rule: 'app:ops',
      readers: { teams: [team] },
    });
    expect(stream.statusCode, stream.body).toBe(201);
    const ingest = await as('POST', '/api/ingest', [
      { app: 'ops', message: 'deploy' },
      { app: 'ops', message: 'rollback' },
      { app: 'web', message: 'GET /' },
    ]);
    expect(ingest.statusCode, ingest.body).toBe(200);
    const dash = await as('POST', '/api/dashboards', {
      title: 'Apps',
      widgets: [
        {
          title: 'Apps',
          query: { type: 'TopN', params: { time_range: { preset: 'last_hour' }, field: 'app' } },
        },
      ],
    });
    expect(dash.statusCode, dash.body).toBe(201);
    dashboardId = dash.json().id;
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `${address.replace('http', 'ws')}/ws/live-updates`;
  });
  afterAll(() => t.close());

  const update = (m: Msg) => m[0] === 'widget-update';
  const done = (m: Msg) => update(m) && (m[1].data as { status: string }).status === 'SUCCESS';
  const watch = async (who: Who) => {
    const c = await Client.open(`${url}?token=${who.token}`);
    c.send(['subscribe', { dashboard_id: dashboardId }]);
    await c.next(is('subscribed'));
    const first = await c.next(done);
    const data = first[1].data as { query_id: string; results: { items: Array<{ value: string }> } };
    return { c, queryId: data.query_id, apps: data.results.items.map((i) => i.value).sort() };
  };

  it('viewers with the same readable streams share one query; others get their own', async () => {
    // Val (viewers[2]) subscribes first: the shared query is started as hers.
    const valFirst = await watch(viewers[2]!);
    const seen = [...(await Promise.all(viewers.slice(0, 2).map(watch))), valFirst];
    expect(new Set(seen.map((s) => s.queryId)).size).toBe(1);
    expect(seen[0]?.apps).toEqual(['ops', 'web']);
    const other = await watch(outsider);
    expect(other.queryId).not.toBe(seen[0]?.queryId);
    expect(other.apps).toEqual(['web']);
    // The outsider's updates never carry the shared query's results.
    await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      payload: { app: 'ops', message: 'scale up' },
    });
    await new Promise((r) => setTimeout(r, 600));
    for (const m of other.c.messages.filter(update)) expect(JSON.stringify(m)).not.toContain('"ops"');

    // Val leaves the team: her subscription to the shared query ends; the others keep
    // theirs (the query keeps the scope it was started for, not its owner's new one).
    const val = seen[2]!;
    await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/teams/${team}`,
      payload: { members: [viewers[0]!.id, viewers[1]!.id] },
    });
    const ended = await val.c.next(is('error'), 5000);
    expect(String(ended[1].detail)).toMatch(/what you may read changed/);
    // Subscribing again gives the query of her reader set now (Otto's), without Ops.
    val.c.messages.splice(0);
    val.c.send(['subscribe', { dashboard_id: dashboardId }]);
    await val.c.next(is('subscribed'));
    const mine = await eventually('her own update', () => {
      const i = val.c.messages.findIndex(done);
      return i >= 0 ? val.c.messages.splice(i, 1)[0] : undefined;
    });
    const data = mine[1].data as { query_id: string; results: { items: Array<{ value: string }> } };
    expect(data.query_id).toBe(other.queryId);
    expect(data.results.items.map((i) => i.value)).toEqual(['web']);
    for (const s of seen.slice(0, 2)) expect(s.c.messages.filter(is('error'))).toEqual([]);
    for (const s of [...seen, other]) s.c.ws.close();
  });
});
