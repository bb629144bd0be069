import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { opsTeamApp, type Who } from '../../helpers/ops-team.js';
import { Client, is, type Msg } from '../../helpers/ws-client.js';

/**
 * A held query answers with what its reader may read at the moment of the read (issue
 * #54, docs/access.md), whoever started it: a widget's query started as a viewer's, or their own
 * query, kept after they left the team that reads the stream, shows none of its events,
 * those stored after the removal included.
 */
describe(`held queries read with the reader's rights now (${BACKEND}, ${EVENT_STORE})`, () => {
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

  const done = (m: Msg) => m[0] === 'widget-update' && (m[1].data as { status: string }).status === 'SUCCESS';
  const view = async (who: Who) => {
    const c = await Client.open(`${url}?token=${who.token}`);
    c.send(['subscribe', { dashboard_id: dashboardId }]);
    await c.next(is('subscribed'));
    const first = await c.next(done);
    return { c, queryId: (first[1].data as { query_id: string }).query_id, text: JSON.stringify(first) };
  };
  const read = (who: Who, path: string) => t.as(who.token, { method: 'GET', url: path });
  const leave = async () => {
    const res = await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/teams/${team}`,
      payload: { members: [vic.id] },
    });
    expect(res.statusCode, res.body).toBe(200);
  };
  const ingestAfter = async () => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      payload: { app: 'ops', message: 'ops-after' },
    });
    expect(res.statusCode, res.body).toBe(200);
  };
  /** An answer with no event of the Ops stream: a 404, or results without them. */
  const withoutOps = (res: { statusCode: number; body: string }) => {
    expect([200, 404], res.body).toContain(res.statusCode);
    expect(res.body).not.toMatch(/ops-(before|after)/);
  };

  it("a widget's query, its first viewer removed from the team: 404 on get, recalculate and export", async () => {
    // Val views first: the widget's query is started as hers; Vic shares it and keeps it live.
    const mine = await view(val);
    const theirs = await view(vic);
    expect(theirs.queryId).toBe(mine.queryId);
    expect(mine.text).toContain('ops-before');
    const id = mine.queryId;
    const before = await read(val, `/api/query/${id}`);
    expect(before.statusCode, before.body).toBe(200);
    expect(before.body).toContain('ops-before');

    await leave();
    await ingestAfter();
    // The shared query still reads Ops for Vic, the event stored after the removal included.
    await theirs.c.next((m) => m[0] === 'widget-update' && JSON.stringify(m).includes('ops-after'), 5000);

    for (const path of [
      `/api/query/${id}`,
      `/api/query/${id}/recalculate`,
      `/api/query/${id}/export?ftype=json`,
    ]) {
      const res = await read(val, path);
      expect(res.statusCode, `${path}: ${res.body}`).toBe(404);
      withoutOps(res);
    }
    mine.c.ws.close();
    theirs.c.ws.close();
  });

  it('her own query, stopped or not, answers without the stream once she left the team', async () => {
    const ops: Record<string, string> = {};
    await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/teams/${team}`,
      payload: { members: [val.id, vic.id] },
    });
    for (const name of ['running', 'stopped']) {
      const created = await t.as(val.token, {
        method: 'POST',
        url: '/api/query',
        payload: { type: 'Search', params: { time_range: { preset: 'last_hour' } } },
      });
      expect(created.statusCode, created.body).toBe(200);
      expect(created.body).toContain('ops-before');
      ops[name] = created.json().query_id;
    }
    const stopped = await read(val, `/api/query/${ops.stopped}/stop`);
    expect(stopped.statusCode, stopped.body).toBe(200);
    expect(stopped.body).toContain('ops-before');

    await leave();
    await ingestAfter();
    for (const id of Object.values(ops)) {
      for (const path of [
        `/api/query/${id}`,
        `/api/query/${id}/export?ftype=json`,
        `/api/query/${id}/recalculate`,
      ]) {
        const res = await read(val, path);
        expect(res.statusCode, `${path}: ${res.body}`).toBe(200);
        withoutOps(res);
      }
      const again = await eventually('the query computed again', async () => {
        const res = await read(val, `/api/query/${id}`);
        return res.json().status === 'SUCCESS' ? res : undefined;
      });
      expect(again.body).toContain('web-before');
      withoutOps(again);
    }
  });
});
