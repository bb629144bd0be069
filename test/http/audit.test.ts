import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../helpers/app.js';
import { eventually } from '../helpers/eventually.js';

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
 * Audit completeness (API §18): each recorded action done once is found exactly once,
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
    const query = one('query.create');
    expect(query.detail).toMatchObject({
      type: 'Search',
      query: 'charge',
      result_count: 1,
      time_range: { preset: 'last_hour' },
    });
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

  it('keeps records for auditRetentionDays', async () => {
    const before = (await records()).length;
    // Nothing is older than the retention: nothing goes; a sweep a year and a day from now removes all.
    expect(await t.rt.services.audit.sweep()).toBe(0);
    expect(await t.rt.services.audit.sweep(Date.now() + 366 * 86_400_000)).toBe(before);
    expect(await records()).toEqual([]);
  });
});
