import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { Client, is } from '../../helpers/ws-client.js';

// Issue 29: a plain user could subscribe to a query whose update exceeded V8's string
// limit, and the rejected publish ended the process; and websocket subscriptions were not
// counted against queryLivePerUser.

const HOUR = { preset: 'last_hour' };

describe(`live updates: bounded updates and the live-query cap on ${BACKEND}`, () => {
  let t: TestApp;
  let url: string;
  let bob: { id: number; token: string };
  beforeAll(async () => {
    t = await createTestApp({
      LOGSCOPE_LIVE_UPDATE_MAX_BYTES: '65536',
      LOGSCOPE_QUERY_LIVE_PER_USER: '2',
      LOGSCOPE_INGEST_BATCH_MS: '5',
    });
    bob = await t.user('bob');
    const big = 'x'.repeat(4000);
    const records = Array.from({ length: 40 }, (_, i) => ({
      message: `hostile-live ${i} ${big}`,
      host: 'h',
    }));
    const res = await t.as(t.adminToken, { method: 'POST', url: '/api/ingest', payload: records });
    expect(res.statusCode).toBe(200);
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `${address.replace('http', 'ws')}/ws/live-updates?token=${bob.token}`;
  });
  afterAll(() => t.close());

  const query = async (body: object) => {
    const res = await t.as(bob.token, { method: 'POST', url: '/api/query', payload: body });
    return { status: res.statusCode, body: res.json() };
  };

  it('an update over liveUpdateMaxBytes ends its subscription with an error; the rest goes on', async () => {
    const big = await query({ type: 'Search', params: { time_range: HOUR, page_size: 100 } });
    expect(big.status).toBe(200);
    const c = await Client.open(url);
    c.send(['subscribe', { query_id: big.body.query_id }]);
    const error = await c.next(is('error'));
    expect(error[1]).toMatchObject({ command: 'subscribe', target: { query_id: big.body.query_id } });
    expect(String(error[1].detail)).toMatch(/more than the 65536 bytes an update may be/);
    expect((await c.next(is('unsubscribed')))[1]).toMatchObject({ subscriptions: [] });
    // The connection and the server serve on: a small query's updates arrive.
    const small = await query({
      type: 'Search',
      params: { time_range: HOUR, page_size: 2, fields: ['host'] },
    });
    c.send(['subscribe', { query_id: small.body.query_id }]);
    await c.next(is('subscribed'));
    const up = await c.next(is('widget-update'));
    expect(up[1].data).toMatchObject({ query_id: small.body.query_id });
    expect((await t.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
    c.ws.close();
  });

  it('watching counts against queryLivePerUser on the websocket too', async () => {
    // Finished queries do not count until watched: make three, watch them.
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const q = await query({ type: 'TopN', params: { time_range: HOUR, field: 'host' } });
      expect(q.status).toBe(200);
      expect(q.body.status).toBe('SUCCESS');
      ids.push(q.body.query_id);
    }
    const c = await Client.open(url);
    for (const id of ids.slice(0, 2)) {
      c.send(['subscribe', { query_id: id }]);
      await c.next(is('subscribed'));
    }
    c.send(['subscribe', { query_id: ids[2] }]);
    const refused = await c.next(is('error'));
    expect(refused[1]).toMatchObject({ command: 'subscribe', target: { query_id: ids[2] } });
    expect(String(refused[1].detail)).toMatch(/2 queries running or watched \(at most 2\)/);
    // Watching one already watched again is no new live query.
    const second = await Client.open(url);
    second.send(['subscribe', { query_id: ids[0] }]);
    expect((await second.next(is('subscribed')))[1]).toMatchObject({ target: { query_id: ids[0] } });
    // And HTTP sees the same count.
    expect((await query({ type: 'TopN', params: { time_range: HOUR, field: 'host' } })).status).toBe(429);
    c.ws.close();
    second.ws.close();
  });

  /** Subscribes; the answer: `subscribed` or `error`. */
  const subscribe = (c: Client, target: object) => {
    c.send(['subscribe', target]);
    return c.next((m) => m[0] === 'subscribed' || m[0] === 'error');
  };

  /** A dashboard of `user`'s with one TopN widget a field. */
  const dashboard = async (user: { token: string }, fields: string[]) => {
    const res = await t.as(user.token, {
      method: 'POST',
      url: '/api/dashboards',
      payload: {
        title: `board ${fields.join(' ')}`,
        widgets: fields.map((field) => ({
          title: field,
          query: { type: 'TopN', params: { time_range: HOUR, field } },
        })),
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as number;
  };

  it('a dashboard of more widgets than queryLivePerUser is refused', async () => {
    // Its widgets' queries were started at once, each checked before any was running.
    const dave = await t.user('dave');
    const c = await Client.open(url.replace(bob.token, dave.token));
    const three = await dashboard(dave, ['host', 'app', 'message']);
    const refused = await subscribe(c, { dashboard_id: three });
    expect(refused[0]).toBe('error');
    expect(refused[1]).toMatchObject({ command: 'subscribe', target: { dashboard_id: three } });
    expect(String(refused[1].detail)).toMatch(/at most 2/);
    expect((await t.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
    c.ws.close();
  });

  it('a widget query started before and reused counts against queryLivePerUser', async () => {
    // The reused query was watched again without being counted: 4 watched of 2.
    const erin = await t.user('erin');
    const c = await Client.open(url.replace(bob.token, erin.token));
    const a = await dashboard(erin, ['host', 'app']);
    const b = await dashboard(erin, ['severity', 'user']);
    expect((await subscribe(c, { dashboard_id: a }))[0]).toBe('subscribed');
    c.send(['unsubscribe', { dashboard_id: a }]);
    await c.next(is('unsubscribed'));
    expect((await subscribe(c, { dashboard_id: b }))[0]).toBe('subscribed');
    const again = await subscribe(c, { dashboard_id: a });
    expect(again[0]).toBe('error');
    expect(String(again[1].detail)).toMatch(/2 queries running or watched \(at most 2\)/);
    c.ws.close();
  });
});
