import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { WidgetQueries } from '../../../src/features/live/widget-queries.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { event, HOUR, seedWeb } from '../../helpers/seed.js';

type Msg = [string, Record<string, unknown>];

/** A websocket client that queues messages and lets a test await the next matching one. */
class Client {
  readonly messages: Msg[] = [];
  private waiters: Array<{ pred: (m: Msg) => boolean; resolve: (m: Msg) => void }> = [];
  closeCode: number | null = null;
  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as Msg;
      this.messages.push(m);
      for (const w of [...this.waiters]) {
        if (w.pred(m)) {
          this.waiters = this.waiters.filter((x) => x !== w);
          w.resolve(m);
        }
      }
    });
    ws.on('close', (code) => {
      this.closeCode = code;
    });
  }
  static async open(url: string, headers: Record<string, string> = {}): Promise<Client> {
    const ws = new WebSocket(url, { headers });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new Client(ws);
  }
  send(m: unknown) {
    this.ws.send(typeof m === 'string' ? m : JSON.stringify(m));
  }
  /** The next message (already received or future) matching `pred`. */
  next(pred: (m: Msg) => boolean, ms = 5000): Promise<Msg> {
    const seen = this.messages.find(pred);
    if (seen) {
      this.messages.splice(this.messages.indexOf(seen), 1);
      return Promise.resolve(seen);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out waiting; got ${JSON.stringify(this.messages.slice(-3))}`)),
        ms,
      );
      this.waiters.push({
        pred,
        resolve: (m) => {
          clearTimeout(timer);
          this.messages.splice(this.messages.indexOf(m), 1);
          resolve(m);
        },
      });
    });
  }
  close() {
    this.ws.close();
  }
}

const is = (cmd: string) => (m: Msg) => m[0] === cmd;
const update =
  (pred: (d: Record<string, unknown>) => boolean = () => true) =>
  (m: Msg) =>
    m[0] === 'widget-update' && pred(m[1].data as Record<string, unknown>);

describe(`live updates websocket on ${BACKEND}`, () => {
  let t: TestApp;
  let url: string;
  let bob: { id: number; token: string };
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_LIVE_BUFFER_BYTES: '65536', LOGSCOPE_INGEST_BATCH_MS: '5' });
    await seedWeb(t);
    bob = await t.user('bob');
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `${address.replace('http', 'ws')}/ws/live-updates`;
  });
  afterAll(() => t.close());

  const query = async (body: object, token = t.adminToken) =>
    (await t.as(token, { method: 'POST', url: '/api/query', payload: body })).json();

  it('refuses the upgrade without a valid USER token, before any frame', async () => {
    for (const [u, headers] of [
      [url, {}],
      [`${url}?token=lsnope_nope`, {}],
      [url, { authorization: 'token lsnope_nope' }],
    ] as const) {
      const ws = new WebSocket(u, { headers });
      const status = await new Promise<number>((resolve) => {
        ws.on('unexpected-response', (req, res) => {
          req.destroy();
          resolve(res.statusCode ?? 0);
        });
        ws.on('open', () => resolve(101));
      });
      expect(status).toBe(401);
    }
    const ingest = await t.rt.services.tokens.create(1, { token_type: 'INGEST' });
    const ws = new WebSocket(`${url}?token=${ingest.secret_key}`);
    const status = await new Promise<number>((resolve) =>
      ws.on('unexpected-response', (req, res) => {
        req.destroy();
        resolve(res.statusCode ?? 0);
      }),
    );
    expect(status).toBe(403);
  });

  it('subscribes to a query: confirmation listing subscriptions, then its current state; ping/pong', async () => {
    const q = await query({ type: 'TopN', params: { time_range: HOUR, field: 'host' } });
    const c = await Client.open(`${url}?token=${t.adminToken}`);
    c.send(['ping', {}]);
    expect(await c.next(is('pong'))).toEqual(['pong', {}]);
    c.send(['subscribe', { query_id: q.query_id }]);
    const sub = await c.next(is('subscribed'));
    expect(sub[1]).toEqual({ target: { query_id: q.query_id }, subscriptions: [{ query_id: q.query_id }] });
    const up = await c.next(update());
    expect(up[1]).toMatchObject({ widget_id: null, dashboard_id: null });
    expect(up[1].data).toMatchObject({ query_id: q.query_id, status: 'SUCCESS', type: 'TopN' });
    const q2 = await query({ type: 'Search', params: { time_range: HOUR } });
    c.send(['subscribe', { query_id: q2.query_id }]);
    expect((await c.next(is('subscribed')))[1].subscriptions).toHaveLength(2);
    c.send(['unsubscribe', { query_id: q.query_id }]);
    expect((await c.next(is('unsubscribed')))[1]).toEqual({
      target: { query_id: q.query_id },
      subscriptions: [{ query_id: q2.query_id }],
    });
    c.send(['unsubscribe_all', {}]);
    expect((await c.next(is('unsubscribed')))[1].subscriptions).toEqual([]);
    c.close();
  });

  it('subscribes to a dashboard (one update per widget) and to a single widget', async () => {
    const dash = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/dashboards',
      payload: {
        title: 'Live board',
        widgets: [
          { title: 'Hosts', query: { type: 'TopN', params: { time_range: HOUR, field: 'host' } } },
          { title: 'Errors', query: { type: 'Search', params: { time_range: HOUR, query: 'status:500' } } },
        ],
      },
    });
    expect(dash.statusCode, dash.body).toBe(201);
    const d = dash.json();
    const [w1, w2] = d.widgets.map((w: { id: number }) => w.id);
    const c = await Client.open(`${url}?token=${t.adminToken}`);
    c.send(['subscribe', { dashboard_id: d.id }]);
    expect((await c.next(is('subscribed')))[1].subscriptions).toEqual([{ dashboard_id: d.id }]);
    const a = await c.next((m) => m[0] === 'widget-update' && m[1].widget_id === w1);
    const b = await c.next((m) => m[0] === 'widget-update' && m[1].widget_id === w2);
    expect(a[1].dashboard_id).toBe(d.id);
    expect(b[1].dashboard_id).toBe(d.id);
    expect((b[1].data as { type: string }).type).toBe('Search');
    c.send(['subscribe', { widget_id: w1 }]);
    await c.next(is('subscribed'));
    const single = await c.next(
      (m) => m[0] === 'widget-update' && m[1].widget_id === w1 && m[1].dashboard_id === null,
    );
    expect((single[1].data as { type: string }).type).toBe('TopN');
    // Someone else's dashboard is invisible: an error, the connection stays.
    const other = await Client.open(`${url}?token=${bob.token}`);
    other.send(['subscribe', { dashboard_id: d.id }]);
    expect((await other.next(is('error')))[1]).toMatchObject({
      command: 'subscribe',
      target: { dashboard_id: d.id },
    });
    other.send(['subscribe', { widget_id: w2 }]);
    await other.next(is('error'));
    other.close();
    c.close();
  });

  it('shares one query between simultaneous subscriptions of one user to a widget', async () => {
    const dash = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/dashboards',
      payload: {
        title: 'Shared',
        widgets: [{ title: 'Apps', query: { type: 'TopN', params: { time_range: HOUR, field: 'app' } } }],
      },
    });
    const widgetId = dash.json().widgets[0].id;
    const { dashboards, queries, runner, readScopes, audit } = t.rt.services;
    const source = new WidgetQueries(dashboards, queries, runner, readScopes, audit);
    const origin = { via: 'websocket', address: null } as const;
    const who = await t.rt.services.tokens.authenticate(t.adminToken);
    const resolved = await Promise.all(
      [1, 2, 3, 4].map(() => source.resolve(who, { widget_id: widgetId }, origin)),
    );
    expect(new Set(resolved.map(([w]) => w?.queryId)).size).toBe(1);
    // A removed query is started again, once.
    await queries.remove(who, resolved[0]![0]!.queryId);
    const again = await Promise.all([1, 2].map(() => source.resolve(who, { widget_id: widgetId }, origin)));
    expect(new Set(again.map(([w]) => w?.queryId)).size).toBe(1);
    expect(again[0]![0]!.queryId).not.toBe(resolved[0]![0]!.queryId);
  });

  it('answers bad messages with an error and keeps the connection open', async () => {
    const c = await Client.open(url, { authorization: `token ${t.adminToken}` });
    const theirs = await query({ type: 'Search', params: { time_range: HOUR } }, bob.token);
    const bad: unknown[] = [
      'not json',
      '{"a":1}',
      '[]',
      ['frobnicate', {}],
      ['subscribe', 'x'],
      ['subscribe', { query_id: 5 }],
      ['subscribe', { widget_id: -1 }],
      ['subscribe', { query_id: '01NOSUCHQUERY0000000000000' }],
      ['subscribe', { query_id: theirs.query_id }],
      ['unsubscribe', { query_id: 'never-subscribed' }],
      `["ping", "${'x'.repeat(70_000)}"]`,
    ];
    for (const m of bad) {
      c.send(m);
      const err = await c.next(is('error'));
      expect(typeof err[1].detail).toBe('string');
    }
    c.send(['ping', {}]);
    await c.next(is('pong'));
    expect(c.closeCode).toBeNull();
    c.close();
  });

  it('streams partial results and the final result of an async query', async () => {
    const c = await Client.open(`${url}?token=${t.adminToken}`);
    const q = await query({ type: 'Search', params: { time_range: HOUR } });
    c.send(['subscribe', { query_id: q.query_id }]);
    await c.next(update((d) => d.status === 'SUCCESS'));
    // Recalculate and watch it go round again.
    await t.as(t.adminToken, { method: 'GET', url: `/api/query/${q.query_id}/recalculate` });
    const progressed = await c.next(update((d) => d.status === 'IN_PROGRESS'));
    expect(progressed[1].data).toMatchObject({ query_id: q.query_id });
    await c.next(update((d) => d.status === 'SUCCESS'));
    c.close();
  });

  it('ends a subscription with one last update when the query is removed', async () => {
    const c = await Client.open(`${url}?token=${t.adminToken}`);
    const q = await query({ type: 'TopN', params: { time_range: HOUR, field: 'status' } });
    c.send(['subscribe', { query_id: q.query_id }]);
    await c.next(update());
    await t.as(t.adminToken, { method: 'GET', url: `/api/query/${q.query_id}/remove` });
    const last = await c.next(update());
    expect((last[1].data as { query_id: string }).query_id).toBe(q.query_id);
    const ended = await c.next(is('unsubscribed'));
    expect(ended[1].subscriptions).toEqual([]);
    c.close();
  });

  it('tails a watched Search: a new matching event arrives within a second of its ingest', async () => {
    const c = await Client.open(`${url}?token=${t.adminToken}`);
    const q = await query({
      type: 'Search',
      params: { time_range: { preset: 'last_15_minutes' }, query: 'tailprobe' },
    });
    c.send(['subscribe', { query_id: q.query_id }]);
    await c.next(update());
    const sent = Date.now();
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      payload: { message: 'tailprobe one' },
    });
    expect(res.json().accepted).toBe(1);
    const got = await c.next(
      update((d) => (d.results as { total: number }).total === 1),
      3000,
    );
    expect(Date.now() - sent).toBeLessThan(1000);
    const events = (got[1].data as { results: { events: Array<{ message: string }> } }).results.events;
    expect(events[0]?.message).toBe('tailprobe one');
    // Events that cannot match do not wake it.
    await t.as(t.adminToken, { method: 'POST', url: '/api/ingest', payload: { message: 'unrelated' } });
    await new Promise((r) => setTimeout(r, 400));
    expect(c.messages.filter(is('widget-update'))).toHaveLength(0);
    c.close();
  });

  it('folds new events into watched aggregates within a second, as a full evaluation counts them', async () => {
    const RANGE = { preset: 'last_15_minutes' };
    const dash = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/dashboards',
      payload: {
        title: 'Folded board',
        widgets: [
          {
            title: 'Count',
            query: {
              type: 'Summary',
              params: { time_range: RANGE, query: 'foldprobe', metrics: [{ op: 'count' }] },
            },
          },
          {
            title: 'Hosts',
            query: { type: 'TopN', params: { time_range: RANGE, query: 'foldprobe', field: 'host' } },
          },
          {
            title: 'Rate',
            query: { type: 'Timeline', params: { time_range: RANGE, query: 'foldprobe', interval: '1m' } },
          },
          {
            title: 'Where',
            query: { type: 'TopN', params: { time_range: RANGE, query: 'foldprobe', field: 'src_ip' } },
            visualization: { kind: 'map', options: {} },
          },
        ],
      },
    });
    expect(dash.statusCode, dash.body).toBe(201);
    const d = dash.json();
    const ids = d.widgets.map((w: { id: number }) => w.id) as number[];
    const c = await Client.open(`${url}?token=${t.adminToken}`);
    c.send(['subscribe', { dashboard_id: d.id }]);
    await c.next(is('subscribed'));
    for (const id of ids) {
      await c.next(
        (m) =>
          m[0] === 'widget-update' &&
          m[1].widget_id === id &&
          (m[1].data as { status: string }).status === 'SUCCESS',
      );
    }
    const sent = Date.now();
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      payload: [
        { message: 'foldprobe 1', host: 'fold-a', src_ip: '8.8.8.8' },
        { message: 'foldprobe 2', host: 'fold-a', src_ip: '8.8.8.8' },
        { message: 'foldprobe 3', host: 'fold-b', src_ip: '10.0.0.1' },
      ],
    });
    expect(res.json().accepted).toBe(3);
    // Well before the refresh interval (liveRefreshMs, 5 s): folded in memory.
    type Data = { query_id: string; status: string; results: Record<string, unknown> };
    /** The widget's first update counting all three events (earlier ones may be initial states). */
    const of = async (id: number, n: (r: Record<string, unknown>) => number) =>
      (
        await c.next(
          (m) =>
            m[0] === 'widget-update' &&
            m[1].widget_id === id &&
            (m[1].data as Data).status === 'SUCCESS' &&
            n((m[1].data as Data).results) === 3,
          1500,
        )
      )[1].data as Data;
    const [count, hosts, rate, where] = await Promise.all([
      of(ids[0] as number, (r) => (r.totals as { count: number }).count),
      of(ids[1] as number, (r) => r.total as number),
      of(ids[2] as number, (r) => (r.buckets as Array<{ count: number }>).reduce((k, b) => k + b.count, 0)),
      of(ids[3] as number, (r) => r.total as number),
    ]);
    expect(Date.now() - sent).toBeLessThan(1000);
    expect(count?.results.totals).toMatchObject({ count: 3 });
    expect(hosts?.results).toMatchObject({
      total: 3,
      items: [
        { value: 'fold-a', count: 2 },
        { value: 'fold-b', count: 1 },
      ],
    });
    const buckets = rate?.results.buckets as Array<{ count: number }>;
    expect(buckets.reduce((n, b) => n + b.count, 0)).toBe(3);
    // The map widget's items are placed by GeoIP; a private address is not.
    const items = where?.results.items as Array<{ value: string; geo?: { country_code?: string } }>;
    expect(items.find((i) => i.value === '8.8.8.8')?.geo?.country_code).toMatch(/^[A-Z]{2}$/);
    expect(items.find((i) => i.value === '10.0.0.1')?.geo).toBeUndefined();
    // A full evaluation of each gives what was folded.
    for (const [folded, key] of [
      [count, 'totals'],
      [hosts, 'items'],
      [rate, 'buckets'],
    ] as const) {
      const full = (
        await t.as(t.adminToken, { method: 'GET', url: `/api/query/${folded?.query_id}/recalculate` })
      ).json() as { results: Record<string, unknown> };
      expect(full.results[key]).toEqual(folded?.results[key]);
    }
    // A second commit is added to what was folded (each event once).
    const more = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      payload: [
        { message: 'foldprobe 4', host: 'fold-b' },
        { message: 'foldprobe 5', host: 'fold-c' },
      ],
    });
    expect(more.json().accepted).toBe(2);
    const five = await c.next(
      (m) =>
        m[0] === 'widget-update' &&
        m[1].widget_id === ids[1] &&
        ((m[1].data as Data).results as { total: number }).total === 5,
      1500,
    );
    expect((five[1].data as Data).results.items).toEqual([
      { value: 'fold-a', count: 2, share: 0.4 },
      { value: 'fold-b', count: 2, share: 0.4 },
      { value: 'fold-c', count: 1, share: 0.2 },
    ]);
    c.close();
  });

  it('merges tailed events as a full evaluation would: newest page, total counted', async () => {
    const c = await Client.open(`${url}?token=${t.adminToken}`);
    const q = await query({
      type: 'Search',
      params: { time_range: { preset: 'last_15_minutes' }, query: 'tailmerge', page_size: 2 },
    });
    c.send(['subscribe', { query_id: q.query_id }]);
    await c.next(update());
    const now = Date.now();
    // Out of time order across commits: the page is by ts, not by arrival.
    for (const [dt, m] of [
      [-3000, 'tailmerge b'],
      [-1000, 'tailmerge c'],
      [-5000, 'tailmerge a'],
    ] as const) {
      const res = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/ingest',
        payload: { message: m, timestamp: new Date(now + dt).toISOString() },
      });
      expect(res.json().accepted).toBe(1);
    }
    type Page = { total: number; events: Array<{ message: string; ev_id: string }> };
    const tailed = (
      await c.next(
        update((d) => (d.results as Page).total === 3),
        3000,
      )
    )[1].data as { results: Page };
    expect(tailed.results.events.map((e) => e.message)).toEqual(['tailmerge c', 'tailmerge b']);
    const full = (
      await t.as(t.adminToken, { method: 'GET', url: `/api/query/${q.query_id}/recalculate` })
    ).json() as { results: Page };
    expect(full.results).toMatchObject({ total: 3 });
    expect(full.results.events.map((e) => e.ev_id)).toEqual(tailed.results.events.map((e) => e.ev_id));
    c.close();
  });

  it('drops a client that cannot keep up (1013) while others keep receiving', async () => {
    await t.rt.events.append(
      Array.from({ length: 3000 }, (_, i) =>
        event({ ts: Date.now() - i, message: `bulk ${'y'.repeat(400)} ${i}` }),
      ),
    );
    const q = await query({
      type: 'Search',
      params: { time_range: { preset: 'last_15_minutes' }, query: 'bulk', page_size: 3000 },
    });
    const slow = await Client.open(`${url}?token=${t.adminToken}`);
    const fast = await Client.open(`${url}?token=${t.adminToken}`);
    for (const c of [slow, fast]) {
      c.send(['subscribe', { query_id: q.query_id }]);
      await c.next(is('subscribed'));
    }
    // The slow client stops reading: its socket fills, then the server's buffer.
    const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    // Once the server has given up on it, the client reads again, so that it reaches the
    // close frame behind its unread bytes before the server's 1 s grace ends (on a loaded
    // machine a fixed number of rounds could outlast it, and the client would see 1006).
    const closedSlow = async () =>
      /logscope_live_slow_clients_closed_total [1-9]/.test((await t.app.inject({ url: '/metrics' })).body);
    let fastUpdates = 0;
    for (let i = 0; i < 12 && slow.closeCode === null; i++) {
      await t.as(t.adminToken, { method: 'GET', url: `/api/query/${q.query_id}/recalculate` });
      await fast.next(update((d) => d.status === 'SUCCESS'));
      fastUpdates++;
      if (await closedSlow()) break;
    }
    socket.resume();
    for (let i = 0; i < 50 && slow.closeCode === null; i++) await new Promise((r) => setTimeout(r, 20));
    expect(slow.closeCode).toBe(1013);
    expect(fastUpdates).toBeGreaterThan(0);
    fast.send(['ping', {}]);
    await fast.next(is('pong'));
    fast.close();
  });
});
