import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { Client, is } from '../../helpers/ws-client.js';

interface Rec {
  id: number;
  at: string;
  actor: {
    user_id: number | null;
    username: string | null;
    token_key_id: string | null;
    address: string | null;
  };
  action: string;
  target: { kind: string; id: string | null } | null;
  detail: Record<string, unknown>;
  outcome: string;
}

/**
 * Audit completeness (docs/api/audit.md): each recorded action done once is found exactly once,
 * with its actor, address, target and outcome; records are read by admins only and
 * cannot be changed through the API.
 */
describe(`the audit trail on ${BACKEND}`, () => {
  let t: TestApp;
  let ann: { id: number; token: string };
  const call = (
    token: string | null,
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: unknown,
  ) => t.as(token, { method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
  const ok = async (
    token: string | null,
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: unknown,
  ) => {
    const res = await call(token, method, url, payload);
    expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
    return String(res.headers['content-type']).startsWith('application/json') ? res.json() : res.body;
  };
  const records = async (filter = ''): Promise<Rec[]> => {
    await t.rt.services.audit.flush();
    const res = await call(t.adminToken, 'GET', `/api/audit?page_size=1000${filter}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results;
  };

  beforeAll(async () => {
    t = await createTestApp();
    ann = await t.user('ann', { permissions: ['manage_triggers'] });
  });
  afterAll(() => t.close());

  it('records each action once, with actor, address, target and outcome', async () => {
    const admin = t.adminToken;
    // Sign-in: one success, one failure; then signing out with the session token.
    await ok(admin, 'POST', '/api/users', { username: 'sam', password: 'sam-password-1' });
    const session = (await ok(null, 'POST', '/api/auth/login', {
      username: 'sam',
      password: 'sam-password-1',
    })) as {
      secret_key: string;
      key_id: string;
    };
    expect(
      (await call(null, 'POST', '/api/auth/login', { username: 'sam', password: 'wrong-password' }))
        .statusCode,
    ).toBe(401);
    await ok(session.secret_key, 'DELETE', `/api/authtokens/${session.secret_key}`);
    // Tokens.
    const token = (await ok(admin, 'POST', '/api/authtokens', { token_type: 'INGEST', name: 'shipper' })) as {
      secret_key: string;
      key_id: string;
    };
    await ok(admin, 'DELETE', `/api/authtokens/${token.secret_key}`);
    // Users, teams, streams, pipelines, triggers, channels: create, update, delete.
    const changes: Array<[string, string, object, object]> = [
      ['user', '/api/users', { username: 'tim' }, { permissions: ['manage_tasks'] }],
      ['team', '/api/teams', { name: 'blue' }, { name: 'green' }],
      ['stream', '/api/streams', { title: 'Web', rule: 'app:nginx' }, { retention_days: 7 }],
      [
        'pipeline',
        '/api/pipelines',
        { name: 'kv', steps: [{ kv: { field: 'message' } }] },
        { enabled: false },
      ],
      ['trigger', '/api/triggers', { name: 'errors', query: 'severity:error' }, { enabled: false }],
      [
        'channel',
        '/api/channels',
        { name: 'hook', type: 'webhook', config: { url: 'http://127.0.0.1:9/x' } },
        { name: 'hook 2' },
      ],
    ];
    const ids = new Map<string, number>();
    for (const [kind, path, create, update] of changes) {
      const made = (await ok(admin, 'POST', path, create)) as { id: number };
      ids.set(kind, made.id);
      await ok(admin, 'PATCH', `${path}/${made.id}`, update);
      await ok(admin, 'DELETE', `${path}/${made.id}`);
    }
    // Reads: a query, its export, an event, a report's file.
    await ok(admin, 'POST', '/api/ingest', { app: 'pay', message: 'charge ok' });
    const q = (await ok(admin, 'POST', '/api/query', {
      type: 'Search',
      params: { query: 'charge', time_range: { preset: 'last_hour' } },
    })) as { query_id: string; results: { total: number; events: Array<{ ev_id: string }> } };
    const evId = q.results.events[0]?.ev_id as string;
    await ok(admin, 'GET', `/api/query/${q.query_id}/export?ftype=csv`);
    await ok(admin, 'GET', `/api/events/${evId}`);
    const report = (await ok(admin, 'POST', '/api/reports', {
      ftype: 'csv',
      source: { kind: 'query', query: { type: 'Search', params: { time_range: { preset: 'last_hour' } } } },
    })) as { id: number };
    await eventually(
      'the report ready',
      async () => (await call(admin, 'GET', `/api/reports/${report.id}`)).json().status === 'READY',
    );
    await ok(admin, 'GET', `/api/reports/${report.id}/file`);
    // Refused: a plain user may not make a stream.
    expect(
      (await call(ann.token, 'POST', '/api/streams', { title: 'Peek', rule: 'app:pay' })).statusCode,
    ).toBe(403);

    const all = await records();
    const count = (action: string, outcome = 'ok') =>
      all.filter((r) => r.action === action && r.outcome === outcome);
    const one = (action: string, outcome = 'ok') => {
      const found = count(action, outcome);
      expect(found, `${action} ${outcome}: ${JSON.stringify(found)}`).toHaveLength(1);
      const r = found[0] as Rec;
      expect(r.actor.address).toBe('127.0.0.1');
      return r;
    };
    // `sam` was made by the admin (user.create once more): two creates, as two were done.
    expect(count('user.create')).toHaveLength(2);
    const login = one('auth.login');
    expect(login.actor).toMatchObject({ username: 'sam', token_key_id: session.key_id });
    expect(login.detail).toEqual({ method: 'password', username: 'sam' });
    const failed = one('auth.login', 'denied');
    expect(failed.actor).toMatchObject({ user_id: null, username: 'sam', token_key_id: null });
    const logout = one('auth.logout');
    expect(logout.actor.username).toBe('sam');
    expect(logout.target).toEqual({ kind: 'token', id: session.key_id });
    expect(one('token.create').target).toEqual({ kind: 'token', id: token.key_id });
    expect(one('token.delete').target).toEqual({ kind: 'token', id: token.key_id });
    for (const [kind] of changes) {
      for (const verb of ['update', 'delete']) {
        const r = one(`${kind}.${verb}`);
        expect(r.target).toEqual({ kind, id: String(ids.get(kind)) });
        expect(r.actor.username).toBe('admin');
      }
      if (kind !== 'user') expect(one(`${kind}.create`).target).toEqual({ kind, id: String(ids.get(kind)) });
    }
    // Two queries: the one POSTed, and the report's, run as its owner when it was generated.
    const queries = count('query.create');
    expect(queries.map((r) => r.detail.via).sort()).toEqual(['http', 'report']);
    const query = queries.find((r) => r.detail.via === 'http') as Rec;
    expect(query.detail).toMatchObject({
      type: 'Search',
      query: 'charge',
      result_count: 1,
      time_range: { preset: 'last_hour' },
    });
    expect(query.actor.address).toBe('127.0.0.1');
    const byReport = queries.find((r) => r.detail.via === 'report') as Rec;
    expect(byReport).toMatchObject({
      actor: { username: 'admin', address: null },
      detail: { report_id: report.id, type: 'Search', result_count: 1 },
    });
    expect(one('report.create').target).toEqual({ kind: 'report', id: String(report.id) });
    expect(one('export.download')).toMatchObject({
      target: { kind: 'query', id: q.query_id },
      detail: { ftype: 'csv' },
    });
    expect(one('event.read').target).toEqual({ kind: 'event', id: evId });
    expect(one('report.download').target).toEqual({ kind: 'report', id: String(report.id) });
    expect(one('stream.create', 'denied').actor.username).toBe('ann');
    // No secret in any record.
    for (const secret of [session.secret_key, token.secret_key, 'sam-password-1', 'wrong-password'])
      expect(JSON.stringify(all)).not.toContain(secret);
  });

  it('filters by actor, action family and time; exports ndjson and csv; admins only; no changes', async () => {
    const byAnn = await records('&actor=ann');
    expect(byAnn.map((r) => r.action)).toEqual(['stream.create']);
    expect((await records(`&actor=${ann.id}`)).map((r) => r.action)).toEqual(['stream.create']);
    const auth = await records('&action=auth.');
    expect(new Set(auth.map((r) => r.action))).toEqual(new Set(['auth.login', 'auth.logout']));
    const all = await records();
    // Newest first.
    expect(all.map((r) => r.id)).toEqual([...all.map((r) => r.id)].sort((a, b) => b - a));
    const future = new Date(Date.now() + 60_000).toISOString();
    expect(await records(`&from=${encodeURIComponent(future)}`)).toEqual([]);
    expect((await records(`&to=${encodeURIComponent(future)}`)).length).toBe(all.length);

    const nd = await call(t.adminToken, 'GET', '/api/audit/export?action=auth.');
    expect(nd.statusCode).toBe(200);
    expect(nd.headers['content-type']).toContain('application/x-ndjson');
    const lines = nd.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Rec);
    expect(lines.map((r) => r.id)).toEqual(auth.map((r) => r.id));
    const csv = await call(t.adminToken, 'GET', '/api/audit/export?ftype=csv&actor=ann');
    expect(csv.statusCode).toBe(200);
    const rows = csv.body.trim().split(/\r?\n/);
    expect(rows[0]).toBe(
      'id,at,user_id,username,token_key_id,address,action,target_kind,target_id,outcome,detail',
    );
    expect(rows).toHaveLength(2);
    expect(rows[1]).toContain('stream.create');

    expect((await call(ann.token, 'GET', '/api/audit')).statusCode).toBe(403);
    expect((await call(ann.token, 'GET', '/api/audit/export')).statusCode).toBe(403);
    const id = all[0]?.id;
    for (const method of ['DELETE', 'PATCH', 'PUT'] as const)
      expect((await call(t.adminToken, method, `/api/audit/${id}`, {})).statusCode).toBe(404);
    expect((await records()).length).toBeGreaterThanOrEqual(all.length);
  });

  it('keeps at most auditAnonymousMaxRecords records with no signed-in actor, the newest', async () => {
    const small = await createTestApp({ LOGSCOPE_AUDIT_ANONYMOUS_MAX_RECORDS: '5' });
    try {
      // Refused bodies from eight addresses: each its own bucket, so none is rate-limited.
      for (let i = 1; i <= 8; i++)
        await small.as(null, {
          method: 'POST',
          url: '/api/auth/login',
          payload: { username: '', password: 'x' },
          remoteAddress: `10.77.0.${i}`,
        });
      await small.as(small.adminToken, { method: 'GET', url: '/api/users' });
      await small.as(small.adminToken, { method: 'POST', url: '/api/teams', payload: { name: 'kept' } });
      await small.rt.services.audit.flush();
      expect(await small.rt.services.audit.sweep()).toBe(3);
      const res = await small.as(small.adminToken, { method: 'GET', url: '/api/audit?page_size=100' });
      const left = res.json().results as Rec[];
      const anonymous = left.filter((r) => r.actor.user_id === null);
      expect(anonymous.map((r) => r.actor.address)).toEqual([8, 7, 6, 5, 4].map((i) => `10.77.0.${i}`));
      // What signed-in users did is not counted against it.
      expect(left.some((r) => r.action === 'team.create')).toBe(true);
    } finally {
      await small.close();
    }
  });

  it('keeps records for auditRetentionDays', async () => {
    const before = (await records()).length;
    // Nothing is older than the retention: nothing goes; a sweep a year and a day from now removes all.
    expect(await t.rt.services.audit.sweep()).toBe(0);
    expect(await t.rt.services.audit.sweep(Date.now() + 366 * 86_400_000)).toBe(before);
    expect(await records()).toEqual([]);
  });
});

/**
 * The trail cannot be abused and misses no read (issue #54): sizes are capped, anonymous
 * records are rate-limited by address, a body that failed validation is not recorded,
 * and every read is recorded where it begins (a context, a widget's query over the
 * websocket), once.
 */
describe(`the audit trail under abuse, and reads by every door, on ${BACKEND}`, () => {
  let t: TestApp;
  let url: string;
  const records = async (filter = ''): Promise<Rec[]> => {
    await t.rt.services.audit.flush();
    const res = await t.as(t.adminToken, { method: 'GET', url: `/api/audit?page_size=1000${filter}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results;
  };
  const login = (username: string, remoteAddress: string) =>
    t.as(null, {
      method: 'POST',
      url: '/api/auth/login',
      payload: { username, password: 'not-the-password' },
      remoteAddress,
    });

  beforeAll(async () => {
    // A flood past the login throttle is answered 429 at once (no password work): the
    // cheapest requests to send, each of which was a record.
    t = await createTestApp({ LOGSCOPE_LOGIN_FAILURES_PER_ADDRESS: '3' });
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    url = `${address.replace('http', 'ws')}/ws/live-updates`;
  });
  afterAll(() => t.close());

  it('a 1 MiB username is refused and recorded as a failed validation, without the body', async () => {
    const huge = 'x'.repeat(1024 * 1024 - 100);
    const res = await login(huge, '10.9.0.1');
    expect(res.statusCode, res.body.slice(0, 200)).toBe(400);
    const [r, ...more] = await records('&action=auth.login');
    expect(more).toEqual([]);
    expect(r).toMatchObject({
      outcome: 'error',
      actor: { user_id: null, username: null, address: '10.9.0.1' },
      detail: { validation: 'failed' },
    });
    expect(JSON.stringify(r).length).toBeLessThan(1024);
  });

  it('caps each text of a record and the detail as a whole', async () => {
    const long = `capped${'y'.repeat(9000)}`;
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: {
        type: 'Search',
        params: {
          query: long,
          filter: Array.from({ length: 40 }, (_, i) => [`f${i}`, 'eq', long]),
          time_range: { preset: 'last_hour' },
        },
      },
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBeLessThan(300);
    const [r] = await records('&action=query.create');
    expect(r?.detail.truncated).toBe(true);
    expect(String(r?.detail.query).length).toBeLessThanOrEqual(257);
    expect(String(r?.detail.query)).toMatch(/^cappedyyy/);
    expect(JSON.stringify(r?.detail).length).toBeLessThanOrEqual(4096);
  });

  it('rate-limits records with no signed-in actor by address, counting what it drops', async () => {
    const started = Date.now();
    const flood = 300;
    for (let i = 0; i < flood; i++) await login(`nobody-${i}`, '10.9.0.2');
    const seconds = (Date.now() - started) / 1000;
    await login('someone-else', '10.9.0.3');
    const all = await records('&action=auth.login');
    const fromFlood = all.filter((r) => r.actor.address === '10.9.0.2');
    // A burst of 50, then 10 a second; another address is not held back by the flood.
    expect(fromFlood.length).toBeLessThanOrEqual(50 + Math.ceil(seconds * 10) + 1);
    expect(fromFlood.length).toBeLessThan(flood);
    expect(all.filter((r) => r.actor.address === '10.9.0.3')).toHaveLength(1);
    // The next record admitted from the flooding address says how many were dropped before it.
    await new Promise((r) => setTimeout(r, 250));
    await login('nobody-after', '10.9.0.2');
    const [after] = await records('&action=auth.login');
    expect(after?.actor.username).toBe('nobody-after');
    expect(after?.detail.suppressed).toBeGreaterThan(0);
    // The addresses of one IPv6 /64 are one source (refused bodies: no password work).
    const v6Started = Date.now();
    for (let i = 1; i <= 120; i++)
      await t.as(null, {
        method: 'POST',
        url: '/api/auth/login',
        payload: { username: '', password: 'x' },
        remoteAddress: `2001:db8:0:7::${i.toString(16)}`,
      });
    const v6Seconds = (Date.now() - v6Started) / 1000;
    const fromV6 = (await records('&action=auth.login')).filter((r) =>
      r.actor.address?.startsWith('2001:db8:0:7:'),
    );
    expect(fromV6.length).toBeLessThanOrEqual(50 + Math.ceil(v6Seconds * 10) + 1);
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const lost = /logscope_audit_lost_total\{reason="rate_limited"\} (\d+)/.exec(metrics);
    expect(Number(lost?.[1])).toBeGreaterThanOrEqual(flood - fromFlood.length);
  });

  it('records a context read, an event read and a query once each, with the door they came through', async () => {
    const ing = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      payload: { app: 'pay', message: 'context anchor' },
    });
    expect(ing.statusCode, ing.body).toBeLessThan(300);
    const before = (await records()).length;
    const q = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Search', params: { query: 'anchor', time_range: { preset: 'last_hour' } } },
    });
    const evId = q.json().results.events[0]?.ev_id as string;
    expect((await t.as(t.adminToken, { method: 'GET', url: `/api/events/${evId}` })).statusCode).toBe(200);
    const ctx = await t.as(t.adminToken, { method: 'GET', url: `/api/events/${evId}/context?before=5` });
    expect(ctx.statusCode, ctx.body).toBe(200);
    const all = await records();
    const fresh = all.slice(0, all.length - before);
    const of = (action: string) => fresh.filter((r) => r.action === action);
    expect(of('query.create')).toHaveLength(1);
    expect(of('query.create')[0]).toMatchObject({
      target: { kind: 'query', id: q.json().query_id },
      detail: { via: 'http', type: 'Search', query: 'anchor', result_count: 1 },
      actor: { username: 'admin', address: '127.0.0.1' },
    });
    expect(of('event.read')).toHaveLength(1);
    expect(of('event.read')[0]).toMatchObject({
      target: { kind: 'event', id: evId },
      detail: { via: 'http' },
    });
    expect(of('event.context')).toHaveLength(1);
    expect(of('event.context')[0]).toMatchObject({
      target: { kind: 'event', id: evId },
      detail: { via: 'http', before: 5 },
      outcome: 'ok',
    });
  });

  it("records creating and changing a widget, and each viewer's widget query over the websocket", async () => {
    const dash = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/dashboards',
      payload: {
        title: 'Watched',
        widgets: [
          {
            title: 'Apps',
            query: { type: 'TopN', params: { time_range: { preset: 'last_hour' }, field: 'app' } },
          },
        ],
      },
    });
    expect(dash.statusCode, dash.body).toBe(201);
    const dashboardId = dash.json().id as number;
    const added = await t.as(t.adminToken, {
      method: 'POST',
      url: `/api/dashboards/${dashboardId}/widgets`,
      payload: {
        title: 'Hosts',
        query: { type: 'TopN', params: { time_range: { preset: 'last_hour' }, field: 'host' } },
      },
    });
    expect(added.statusCode, added.body).toBe(200);
    const widgetId = added.json().id as number;
    const changed = await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/widgets/${widgetId}`,
      payload: { title: 'Hosts seen' },
    });
    expect(changed.statusCode, changed.body).toBe(200);
    const changes = await records('&action=widget.');
    expect(changes.map((r) => [r.action, r.target?.id])).toEqual([
      ['widget.update', String(widgetId)],
      ['widget.create', String(widgetId)],
    ]);
    expect((await records('&action=dashboard.create'))[0]?.target).toEqual({
      kind: 'dashboard',
      id: String(dashboardId),
    });

    // Two connections view the widget: the first starts its query, the second shares it.
    const before = (await records('&action=query.')).length;
    const viewers: Client[] = [];
    for (const _ of [1, 2]) {
      const c = await Client.open(`${url}?token=${t.adminToken}`);
      c.send(['subscribe', { widget_id: widgetId }]);
      await c.next(is('widget-update'));
      viewers.push(c);
    }
    for (const c of viewers) c.ws.close();
    const queries = await records('&action=query.');
    const reads = queries.slice(0, queries.length - before);
    expect(reads.map((r) => r.action).sort()).toEqual(['query.create', 'query.read']);
    for (const r of reads)
      expect(r).toMatchObject({
        actor: { username: 'admin', address: '127.0.0.1' },
        target: { kind: 'query' },
        detail: { via: 'websocket', widget_id: widgetId },
        outcome: 'ok',
      });
    expect(reads[0]?.target?.id).toBe(reads[1]?.target?.id);
  });
});
