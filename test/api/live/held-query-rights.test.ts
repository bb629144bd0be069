import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { opsTeamApp, type Who } from '../../helpers/ops-team.js';
import { Client, is, type Msg } from '../../helpers/ws-client.js';

/**
 * A subscription by `query_id` reads with the subscriber's rights now (issue #54,
 * docs/access.md), at subscribe time and when they change: a viewer removed from the team that reads
 * a stream gets no event of it through a widget's query they started, nor through a
 * query of their own, those stored after the removal included.
 */
describe(`subscriptions by query_id follow the reader's rights (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  let url: string;
  let team: number;
  let dashboardId: number;
  let val: Who;
  let vic: Who;

  beforeAll(async () => {
    ({ t, url, team, dashboardId, val, vic } = await opsTeamApp());
  });
  afterAll(() => t.close());

  const update = (m: Msg) => m[0] === 'widget-update';
  const done = (m: Msg) => update(m) && (m[1].data as { status: string }).status === 'SUCCESS';
  const members = async (ids: number[]) => {
    const res = await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/teams/${team}`,
      payload: { members: ids },
    });
    expect(res.statusCode, res.body).toBe(200);
  };
  const ingest = async (message: string) => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      payload: { app: 'ops', message },
    });
    expect(res.statusCode, res.body).toBe(200);
  };

  it("a widget's query watched by query_id ends when its viewer leaves the team; subscribing again is refused", async () => {
    // Val views first (the widget's query is hers), then watches it by its id as well.
    const mine = await Client.open(`${url}?token=${val.token}`);
    mine.send(['subscribe', { dashboard_id: dashboardId }]);
    const first = await mine.next(done);
    const queryId = (first[1].data as { query_id: string }).query_id;
    const theirs = await Client.open(`${url}?token=${vic.token}`);
    theirs.send(['subscribe', { dashboard_id: dashboardId }]);
    expect(((await theirs.next(done))[1].data as { query_id: string }).query_id).toBe(queryId);
    mine.send(['subscribe', { query_id: queryId }]);
    await mine.next((m) => is('subscribed')(m) && JSON.stringify(m[1].target).includes(queryId));
    expect(JSON.stringify(await mine.next(done))).toContain('ops-before');

    await members([vic.id]);
    const ended = await mine.next(
      (m) => is('error')(m) && (m[1].target as { query_id?: string } | undefined)?.query_id === queryId,
      5000,
    );
    expect(String(ended[1].detail)).toMatch(/may read changed|may no longer read/);
    mine.messages.splice(0);
    await ingest('ops-after');
    // The shared query still reads Ops for Vic, the event stored after the removal included.
    await theirs.next((m) => update(m) && JSON.stringify(m).includes('ops-after'), 5000);

    mine.send(['subscribe', { query_id: queryId }]);
    const refused = await mine.next(is('error'));
    expect(refused[1].detail).toBe('No such query.');
    await new Promise((r) => setTimeout(r, 300));
    for (const m of mine.messages) expect(JSON.stringify(m)).not.toMatch(/ops-(before|after)/);
    mine.ws.close();
    theirs.ws.close();
  });

  it('her own stopped query, subscribed by query_id after she left the team, comes without the stream', async () => {
    await members([val.id, vic.id]);
    const created = await t.as(val.token, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Search', params: { time_range: { preset: 'last_hour' } } },
    });
    expect(created.statusCode, created.body).toBe(200);
    expect(created.body).toContain('ops-before');
    const queryId = created.json().query_id as string;
    const stopped = await t.as(val.token, { method: 'GET', url: `/api/query/${queryId}/stop` });
    expect(stopped.body).toContain('ops-before');

    await members([vic.id]);
    await ingest('ops-later');
    const c = await Client.open(`${url}?token=${val.token}`);
    c.send(['subscribe', { query_id: queryId }]);
    await c.next(is('subscribed'));
    const mine = await eventually('an update with her results now', () =>
      c.messages.find((m) => done(m) && JSON.stringify(m).includes('web-before')),
    );
    expect(JSON.stringify(mine)).not.toMatch(/ops-(before|after|later)/);
    for (const m of c.messages) expect(JSON.stringify(m)).not.toMatch(/ops-(before|after|later)/);
    c.ws.close();
  });
});
