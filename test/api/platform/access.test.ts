import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { Client, is, type Msg } from '../../helpers/ws-client.js';

type Who = { id: number; token: string };
type Row = { message: string; app: string; ev_id: string };

/**
 * Who reads what (streams and access): every read path, for a reader of a stream, a
 * non-reader, an administrator and a user in no team but `everyone`. Streams: Payments
 * (app:payments, read by the payments team: alice), Auth (app:sshd, read by bob), and the
 * built-in Default (the rest, read by everyone).
 */
describe(`who reads what, on every path (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  let alice: Who;
  let bob: Who;
  let carol: Who;
  let payments: number;
  let auth: number;
  let paymentsTeam: number;
  let url: string;
  const ids = new Map<string, string>();
  const LAST_HOUR = { preset: 'last_hour' };

  const call = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, payload?: object) =>
    t.as(token, { method, url: path, ...(payload ? { payload } : {}) });
  const query = async (token: string, type: string, params: object = {}) => {
    const res = await call(token, 'POST', '/api/query', {
      type,
      params: { time_range: LAST_HOUR, ...params },
    });
    return res;
  };
  const search = async (token: string, params: object = {}) => {
    const res = await query(token, 'Search', { page_size: 100, ...params });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    return {
      id: body.query_id as string,
      total: body.results.total as number,
      apps: (body.results.events as Row[]).map((e) => e.app).sort(),
    };
  };
  const ingest = async (lines: object[]) => {
    const res = await call(t.adminToken, 'POST', '/api/ingest', lines as unknown as object);
    expect(res.statusCode, res.body).toBe(200);
  };

  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_TOKEN_CACHE_SECONDS: '1' });
    alice = await t.user('alice', { permissions: ['manage_triggers'] });
    bob = await t.user('bob', { permissions: ['manage_triggers'] });
    carol = await t.user('carol');
    paymentsTeam = (
      await call(t.adminToken, 'POST', '/api/teams', { name: 'payments', members: [alice.id] })
    ).json().id;
    const made = async (title: string, rule: string, readers: object) => {
      const res = await call(t.adminToken, 'POST', '/api/streams', { title, rule, readers });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as number;
    };
    payments = await made('Payments', 'app:payments', { teams: [paymentsTeam] });
    auth = await made('Auth', 'app:sshd', { users: [bob.id] });
    await ingest([
      { app: 'payments', message: 'charge ok', card_last4: '4242' },
      { app: 'payments', message: 'charge declined', card_last4: '0002' },
      { app: 'payments', message: 'refund', card_last4: '4242' },
      { app: 'sshd', message: 'Failed password for root', ssh_user: 'root' },
      { app: 'sshd', message: 'Accepted publickey for deploy', ssh_user: 'deploy' },
      { app: 'nginx', message: 'GET / 200' },
      { app: 'nginx', message: 'GET /login 200' },
      { app: 'nginx', message: 'GET /missing 404' },
      { app: 'cron', message: 'job done' },
    ]);
    const all = await search(t.adminToken);
    expect(all.total).toBe(9);
    for (const e of (await query(t.adminToken, 'Search', { page_size: 100 })).json().results.events as Row[])
      ids.set(e.message, e.ev_id);
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `${address.replace('http', 'ws')}/ws/live-updates`;
  });
  afterAll(() => t.close());

  it('Search: each reads their streams and Default; the admin all; no total counts what is hidden', async () => {
    expect(await search(alice.token)).toMatchObject({ total: 7 });
    expect((await search(alice.token)).apps).toEqual([
      'cron',
      'nginx',
      'nginx',
      'nginx',
      'payments',
      'payments',
      'payments',
    ]);
    expect((await search(bob.token)).apps).toEqual(['cron', 'nginx', 'nginx', 'nginx', 'sshd', 'sshd']);
    expect((await search(carol.token)).apps).toEqual(['cron', 'nginx', 'nginx', 'nginx']);
    expect((await search(t.adminToken)).total).toBe(9);
    // A query that names only hidden events finds none, not an error.
    expect(await search(carol.token, { query: 'app:sshd OR app:payments' })).toMatchObject({ total: 0 });
  });

  it('Table: pipes aggregate only what the caller may read, and a hidden field finds nothing', async () => {
    const table = async (token: string, q: string) => {
      const res = await query(token, 'Table', { query: q });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().results.rows as Array<Array<string | number | null>>;
    };
    expect(await table(bob.token, '* | stats count() by app | sort app')).toEqual([
      ['cron', 1],
      ['nginx', 3],
      ['sshd', 2],
    ]);
    expect(await table(carol.token, '* | top 5 app')).toEqual([
      ['nginx', 3],
      ['cron', 1],
    ]);
    expect(await table(carol.token, '* | stats count_distinct(card_last4) as cards')).toEqual([[0]]);
    expect(await table(alice.token, '* | stats count_distinct(card_last4) as cards')).toEqual([[2]]);
    expect(await table(carol.token, 'app:payments | fields message')).toEqual([]);
  });

  it('TopN, LastN, Summary and Timeline count only what the caller may read', async () => {
    const topn = async (token: string) => {
      const res = await query(token, 'TopN', { field: 'app', n: 10 });
      expect(res.statusCode, res.body).toBe(200);
      return Object.fromEntries(
        (res.json().results.items as Array<{ value: string; count: number }>).map((i) => [i.value, i.count]),
      );
    };
    expect(await topn(alice.token)).toEqual({ payments: 3, nginx: 3, cron: 1 });
    expect(await topn(bob.token)).toEqual({ sshd: 2, nginx: 3, cron: 1 });
    const lastn = await query(carol.token, 'LastN', { field: 'app', n: 10 });
    expect((lastn.json().results.items as Array<{ value: string }>).map((i) => i.value).sort()).toEqual([
      'cron',
      'nginx',
    ]);
    const summary = await query(bob.token, 'Summary', { group_by: ['app'], metrics: [{ op: 'count' }] });
    expect(summary.statusCode, summary.body).toBe(200);
    expect(JSON.stringify(summary.json().results)).not.toContain('payments');
    const timeline = await query(carol.token, 'Timeline', { interval: '1m' });
    expect(timeline.statusCode, timeline.body).toBe(200);
    const buckets = timeline.json().results.buckets as Array<{ count: number }>;
    const counted = buckets.reduce((n, b) => n + b.count, 0);
    expect(counted).toBe(4);
  });

  it('an event by id, its timestamps and its triggers: 404 to whoever may not read it, never 403', async () => {
    const sshd = ids.get('Failed password for root') as string;
    const pay = ids.get('refund') as string;
    for (const suffix of ['', '/timestamps', '/triggers']) {
      expect((await call(alice.token, 'GET', `/api/events/${sshd}${suffix}`)).statusCode).toBe(404);
      expect((await call(carol.token, 'GET', `/api/events/${pay}${suffix}`)).statusCode).toBe(404);
      expect((await call(bob.token, 'GET', `/api/events/${sshd}${suffix}`)).statusCode).toBe(200);
      expect((await call(alice.token, 'GET', `/api/events/${pay}${suffix}`)).statusCode).toBe(200);
      expect((await call(t.adminToken, 'GET', `/api/events/${pay}${suffix}`)).statusCode).toBe(200);
    }
    const gone = await call(alice.token, 'GET', `/api/events/${sshd}`);
    const missing = await call(alice.token, 'GET', '/api/events/01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect(gone.json()).toEqual(missing.json());
  });

  it('fields: no name or value from a stream the caller may not read', async () => {
    const names = async (token: string) => {
      const res = await call(token, 'GET', '/api/fields?preset=last_hour');
      expect(res.statusCode, res.body).toBe(200);
      return JSON.stringify(res.json());
    };
    const forCarol = await names(carol.token);
    expect(forCarol).not.toContain('card_last4');
    expect(forCarol).not.toContain('ssh_user');
    expect(await names(alice.token)).toContain('card_last4');
    expect(await names(alice.token)).not.toContain('ssh_user');
    expect(await names(bob.token)).toContain('ssh_user');
  });

  it('exports hold only what the owner may read', async () => {
    const q = await search(alice.token);
    const res = await call(alice.token, 'GET', `/api/query/${q.id}/export?ftype=json`);
    expect(res.statusCode, res.body).toBe(200);
    const text = res.body;
    expect(text).toContain('charge declined');
    expect(text).not.toContain('Failed password');
  });

  it('reports hold only what their owner may read', async () => {
    const made = await call(alice.token, 'POST', '/api/reports', {
      ftype: 'csv',
      source: { kind: 'query', query: { type: 'Search', params: { time_range: LAST_HOUR } } },
    });
    expect(made.statusCode, made.body).toBe(202);
    const id = made.json().id;
    await eventually('the report ready', async () => {
      const r = (await call(alice.token, 'GET', `/api/reports/${id}`)).json();
      if (r.status === 'ERROR') throw new Error(r.error);
      return r.status === 'READY';
    });
    const file = await call(alice.token, 'GET', `/api/reports/${id}/file`);
    expect(file.statusCode).toBe(200);
    expect(file.body).toContain('charge declined');
    expect(file.body).toContain('GET /login 200');
    expect(file.body).not.toContain('Failed password');
  });

  it('params.streams and stream: narrow within what the caller may read; an unreadable or unknown one is 400', async () => {
    expect((await search(alice.token, { streams: [payments] })).apps).toEqual([
      'payments',
      'payments',
      'payments',
    ]);
    expect((await search(alice.token, { query: 'stream:Payments' })).total).toBe(3);
    expect((await search(alice.token, { query: `stream:${payments} AND refund` })).total).toBe(1);
    expect((await search(alice.token, { query: 'NOT stream:payments' })).total).toBe(4);
    expect((await search(t.adminToken, { query: 'stream:Auth' })).total).toBe(2);
    expect((await search(carol.token, { query: 'stream:Default' })).total).toBe(4);
    for (const params of [
      { streams: [auth] },
      { streams: [99_999] },
      { query: 'stream:Auth' },
      { query: 'stream:nope' },
    ]) {
      const res = await query(alice.token, 'Search', params);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.body).not.toContain('sshd');
    }
    const unknown = await query(alice.token, 'Search', { streams: [99_999] });
    const hidden = await query(alice.token, 'Search', { streams: [auth] });
    expect(unknown.json().errors['params.streams'][0]).toMatch(/No stream you may read/);
    expect(hidden.json().errors['params.streams'][0]).toMatch(/No stream you may read/);
  });

  it('triggers match only what their owner may read', async () => {
    const trigger = async (who: Who, name: string) => {
      const res = await call(who.token, 'POST', '/api/triggers', { name, query: 'declined-probe' });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as number;
    };
    const alicesTrigger = await trigger(alice, 'alice sees declines');
    const bobsTrigger = await trigger(bob, 'bob does not');
    await ingest([{ app: 'payments', message: 'declined-probe card' }]);
    const probe = await eventually('the probe stored', async () => {
      const res = await search(t.adminToken, { query: 'declined-probe' });
      return res.total === 1 ? res.id : undefined;
    });
    expect(probe).toBeDefined();
    const evId = (await query(t.adminToken, 'Search', { query: 'declined-probe' })).json().results.events[0]
      .ev_id;
    const matched = await eventually('the match recorded', async () => {
      const res = await call(t.adminToken, 'GET', `/api/events/${evId}/triggers`);
      const list = res.json().triggers as Array<{ trigger_id: number }>;
      return list.length > 0 ? list.map((m) => m.trigger_id) : undefined;
    });
    expect(matched).toContain(alicesTrigger);
    expect(matched).not.toContain(bobsTrigger);
    // A trigger on a stream its owner may not read is refused, as a search on it is.
    const refused = await call(bob.token, 'POST', '/api/triggers', {
      name: 'peek',
      query: 'stream:Payments',
    });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().errors.query[0]).toMatch(/No stream you may read/);
    const mine = await call(bob.token, 'POST', '/api/triggers', {
      name: 'own',
      query: 'stream:Auth AND root',
    });
    expect(mine.statusCode, mine.body).toBe(201);
  });

  it('the live tail sends a viewer only the new events they may read', async () => {
    const q = (
      await query(alice.token, 'Search', { time_range: { preset: 'last_15_minutes' }, query: 'tailprobe' })
    ).json();
    const c = await Client.open(`${url}?token=${alice.token}`);
    c.send(['subscribe', { query_id: q.query_id }]);
    await c.next(is('widget-update'));
    await ingest([
      { app: 'sshd', message: 'tailprobe hidden' },
      { app: 'payments', message: 'tailprobe shown' },
    ]);
    const total = (m: Msg) => ((m[1].data as { results?: { total?: number } }).results?.total ?? 0) as number;
    const got = await c.next((m) => m[0] === 'widget-update' && total(m) >= 1, 3000);
    const events = (got[1].data as { results: { events: Row[] } }).results.events;
    expect(events.map((e) => e.message)).toEqual(['tailprobe shown']);
    expect(total(got)).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    for (const m of c.messages.filter(is('widget-update'))) expect(JSON.stringify(m)).not.toContain('hidden');
    c.ws.close();
  });

  it('a viewer who loses a stream stops seeing it at once, in a live tail already running', async () => {
    const q = (
      await query(alice.token, 'Search', { time_range: { preset: 'last_15_minutes' }, query: 'rightsprobe' })
    ).json();
    const c = await Client.open(`${url}?token=${alice.token}`);
    c.send(['subscribe', { query_id: q.query_id }]);
    await c.next(is('widget-update'));
    const total = (m: Msg) =>
      ((m[1].data as { results?: { total?: number } }).results?.total ?? -1) as number;
    await ingest([{ app: 'payments', message: 'rightsprobe one' }]);
    await c.next((m) => m[0] === 'widget-update' && total(m) === 1, 3000);
    // Out of the payments team: the held query is computed again without Payments.
    await call(t.adminToken, 'PATCH', `/api/teams/${paymentsTeam}`, { members: [] });
    await c.next((m) => m[0] === 'widget-update' && total(m) === 0, 3000);
    await ingest([{ app: 'payments', message: 'rightsprobe two' }]);
    await new Promise((r) => setTimeout(r, 500));
    const shown = (m: Msg) => (m[1].data as { results?: { events?: Row[] } }).results?.events ?? [];
    for (const m of c.messages.filter(is('widget-update'))) expect(shown(m)).toEqual([]);
    const read = await call(alice.token, 'GET', `/api/query/${q.query_id}`);
    expect(read.json().results.total).toBe(0);
    await call(t.adminToken, 'PATCH', `/api/teams/${paymentsTeam}`, { members: [alice.id] });
    await call(alice.token, 'GET', `/api/query/${q.query_id}/recalculate`);
    expect(
      await eventually('the query computed again', async () => {
        const again = (await call(alice.token, 'GET', `/api/query/${q.query_id}`)).json();
        return again.status === 'SUCCESS' ? again.results.total : undefined;
      }),
    ).toBe(2);
    c.ws.close();
  });

  it('a change of team, stream or readers applies to the next read; a user who may read nothing gets empty results', async () => {
    // Carol joins the payments team: she reads Payments at once.
    const joined = await call(t.adminToken, 'PATCH', `/api/teams/${paymentsTeam}`, {
      members: [alice.id, carol.id],
    });
    expect(joined.statusCode, joined.body).toBe(200);
    const pays = (await search(t.adminToken, { query: 'app:payments' })).total;
    const all = (await search(t.adminToken)).total;
    // Default (nginx and cron: 4) and every payments event so far.
    expect((await search(carol.token)).total).toBe(4 + pays);
    // A wider rule applies to history: Payments also takes cron.
    const wider = await call(t.adminToken, 'PATCH', `/api/streams/${payments}`, {
      rule: 'app:payments OR app:cron',
    });
    expect(wider.statusCode, wider.body).toBe(200);
    expect((await search(alice.token, { streams: [payments] })).total).toBe(pays + 1);
    // Nobody but the admin reads Default any more: Carol reads only Payments.
    const defaults = (await call(t.adminToken, 'GET', '/api/streams'))
      .json()
      .results.find((s: { builtin: boolean }) => s.builtin);
    const closed = await call(t.adminToken, 'PATCH', `/api/streams/${defaults.id}`, {
      readers: { teams: [] },
    });
    expect(closed.statusCode, closed.body).toBe(200);
    expect((await search(carol.token)).apps).toEqual(['cron', ...Array(pays).fill('payments')]);
    // Out of the team: nothing at all, as empty results.
    await call(t.adminToken, 'PATCH', `/api/teams/${paymentsTeam}`, { members: [alice.id] });
    expect(await search(carol.token)).toMatchObject({ total: 0, apps: [] });
    const topn = await query(carol.token, 'TopN', { field: 'app' });
    expect(topn.statusCode, topn.body).toBe(200);
    expect(topn.json().results.items).toEqual([]);
    expect((await search(t.adminToken)).total).toBe(all);
  });
});
