import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

type Who = { id: number; token: string };

/**
 * /api/log-metrics (docs/api/log-metrics.md, the contract's §26): the definitions, as a client
 * sees them: defaults, every validation rule naming its field with nothing stored, names
 * unique on the server, the per-user limit, visibility and who may change, resets.
 */
describe(`log metrics' definitions on ${BACKEND}`, () => {
  let t: TestApp;
  let ada: Who;
  let ben: Who;
  let cy: Who;
  let team: number;
  const call = (
    token: string,
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ) => t.as(token, { method, url, ...(payload ? { payload } : {}) });
  const names = async (token: string, qs = '') => {
    const res = await call(token, 'GET', `/api/log-metrics${qs}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().results as Array<{ name: string }>).map((m) => m.name);
  };
  const total = async () => (await call(t.adminToken, 'GET', '/api/log-metrics?show_all=true')).json().count;

  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_LOG_METRICS_PER_USER: '4', LOGSCOPE_LOG_METRIC_MAX_SERIES: '500' });
    ada = await t.user('ada');
    ben = await t.user('ben');
    cy = await t.user('cy');
    team = (await call(t.adminToken, 'POST', '/api/teams', { name: 'ops', members: [ada.id, ben.id] })).json()
      .id;
  });
  afterAll(() => t.close());

  it('defines a metric with its defaults; its owner and admins see it, others get 404', async () => {
    const res = await call(ada.token, 'POST', '/api/log-metrics', {
      name: 'nginx_errors',
      query: 'app:nginx AND severity:error',
    });
    expect(res.statusCode, res.body).toBe(201);
    const m = res.json();
    expect(m).toMatchObject({
      name: 'nginx_errors',
      description: '',
      query: 'app:nginx AND severity:error',
      kind: 'count',
      field: null,
      quantiles: null,
      labels: [],
      resolution_seconds: 60,
      retention_days: 400,
      // The default, 10,000, within the setting logMetricMaxSeries (500 here).
      max_series: 500,
      shared_with: { teams: [], everyone: false },
      owner: ada.id,
      backfilled: [],
      series_count: 0,
      dropped_series: 0,
    });
    expect(m.counting_since).toBe(m.created_at);
    expect((await call(t.adminToken, 'GET', `/api/log-metrics/${m.id}`)).statusCode).toBe(200);
    expect((await call(ben.token, 'GET', `/api/log-metrics/${m.id}`)).statusCode).toBe(404);
    expect(
      (await call(ben.token, 'PATCH', `/api/log-metrics/${m.id}`, { description: 'x' })).statusCode,
    ).toBe(404);
    expect(await names(ben.token)).toEqual([]);
    // Admins list theirs and those shared with them; every metric with show_all.
    expect(await names(t.adminToken)).toEqual([]);
    expect(await names(t.adminToken, '?show_all=true')).toContain('nginx_errors');
  });

  it('refuses every broken rule with a 400 naming its field, and stores nothing', async () => {
    const before = await total();
    const bad: Array<[object, string]> = [
      [{ name: '9lives' }, 'name'],
      [{ name: 'has-dash' }, 'name'],
      [{ name: '__x' }, 'name'],
      [{ name: 'logscope_x' }, 'name'],
      [{ name: 'requests_total' }, 'name'],
      [{ name: 'latency_bucket' }, 'name'],
      [{ name: 'x'.repeat(101) }, 'name'],
      [{ name: 'ok_1', description: 'd'.repeat(1001) }, 'description'],
      [{ name: 'ok_1', query: 'app:(' }, 'query'],
      [{ name: 'ok_1', query: 'app:nginx | stats count()' }, 'query'],
      [{ name: 'ok_1', query: 'stream:1' }, 'query'],
      [{ name: 'ok_1', kind: 'median' }, 'kind'],
      [{ name: 'ok_1', kind: 'sum' }, 'field'],
      [{ name: 'ok_1', kind: 'count', field: 'bytes' }, 'field'],
      [{ name: 'ok_1', kind: 'avg', field: 'message' }, 'field'],
      [{ name: 'ok_1', kind: 'avg', field: 'has space' }, 'field'],
      [{ name: 'ok_1', kind: 'sum', field: 'bytes', quantiles: [0.5] }, 'quantiles'],
      [{ name: 'ok_1', kind: 'quantiles', field: 'bytes', quantiles: [] }, 'quantiles'],
      [{ name: 'ok_1', kind: 'quantiles', field: 'bytes', quantiles: [0.5, 0.5] }, 'quantiles'],
      [{ name: 'ok_1', kind: 'quantiles', field: 'bytes', quantiles: [1] }, 'quantiles'],
      [
        {
          name: 'ok_1',
          kind: 'quantiles',
          field: 'bytes',
          quantiles: Array.from({ length: 11 }, (_, i) => (i + 1) / 12),
        },
        'quantiles',
      ],
      [{ name: 'ok_1', labels: ['a', 'b', 'c', 'd', 'e', 'f'] }, 'labels'],
      [{ name: 'ok_1', labels: ['message'] }, 'labels'],
      [{ name: 'ok_1', labels: ['http.method', 'http_method'] }, 'labels'],
      [{ name: 'ok_1', labels: ['le'] }, 'labels'],
      [{ name: 'ok_1', labels: ['__x'] }, 'labels'],
      [{ name: 'ok_1', resolution_seconds: 7 }, 'resolution_seconds'],
      [{ name: 'ok_1', resolution_seconds: 70 }, 'resolution_seconds'],
      [{ name: 'ok_1', resolution_seconds: 7200 }, 'resolution_seconds'],
      [{ name: 'ok_1', retention_days: 0 }, 'retention_days'],
      [{ name: 'ok_1', retention_days: 3651 }, 'retention_days'],
      [{ name: 'ok_1', max_series: 501 }, 'max_series'],
      [{ name: 'ok_1', max_series: 0 }, 'max_series'],
      [{ name: 'ok_1', shared_with: { teams: [987_654] } }, 'shared_with.teams'],
    ];
    for (const [body, field] of bad) {
      const res = await call(ada.token, 'POST', '/api/log-metrics', body);
      expect(res.statusCode, `${JSON.stringify(body)}: ${res.body}`).toBe(400);
      const errors = res.json().errors as Record<string, string[]>;
      expect(
        Object.keys(errors).some((k) => k === field || k.startsWith(`${field}`)),
        `${JSON.stringify(body)}: ${res.body}`,
      ).toBe(true);
    }
    expect(await total()).toBe(before);
    // The pipe's refusal names the type that takes pipes.
    const piped = await call(ada.token, 'POST', '/api/log-metrics', { name: 'ok_1', query: 'x | top host' });
    expect(piped.json().errors.query[0]).toContain('Table');
  });

  it('keeps names unique on the server (409 name_taken), and a user to their limit (409 limit_reached)', async () => {
    const taken = await call(ben.token, 'POST', '/api/log-metrics', { name: 'nginx_errors' });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toMatchObject({ code: 'name_taken', errors: { name: expect.any(Array) } });
    for (const name of ['b1', 'b2', 'b3', 'b4'])
      expect((await call(ben.token, 'POST', '/api/log-metrics', { name })).statusCode).toBe(201);
    const over = await call(ben.token, 'POST', '/api/log-metrics', { name: 'b5' });
    expect(over.statusCode).toBe(409);
    expect(over.json().code).toBe('limit_reached');
    // Admins are not limited.
    for (const name of ['a1', 'a2', 'a3', 'a4', 'a5'])
      expect((await call(t.adminToken, 'POST', '/api/log-metrics', { name })).statusCode).toBe(201);
    // A metric renamed to a taken name is refused and keeps its own.
    const b1 = (await call(ben.token, 'GET', '/api/log-metrics?name=b1')).json().results[0];
    const rename = await call(ben.token, 'PATCH', `/api/log-metrics/${b1.id}`, { name: 'a1' });
    expect(rename.statusCode).toBe(409);
    expect((await call(ben.token, 'GET', `/api/log-metrics/${b1.id}`)).json().name).toBe('b1');
  });

  it('is shared with a team: its members read it, only the owner and admins change or delete it', async () => {
    const made = await call(ada.token, 'POST', '/api/log-metrics', {
      name: 'ops_latency',
      kind: 'quantiles',
      field: 'duration_ms',
      quantiles: [0.99, 0.5],
      labels: ['host', 'http.method'],
      shared_with: { teams: [team] },
    });
    expect(made.statusCode, made.body).toBe(201);
    const m = made.json();
    expect(m.quantiles).toEqual([0.5, 0.99]);
    expect(m.shared_with).toEqual({ teams: [team], everyone: false });
    expect(await names(ben.token, '?shared=true')).toEqual(['ops_latency']);
    expect(await names(cy.token)).toEqual([]);
    expect((await call(ben.token, 'GET', `/api/log-metrics/${m.id}`)).statusCode).toBe(200);
    expect(
      (await call(ben.token, 'PATCH', `/api/log-metrics/${m.id}`, { description: 'b' })).statusCode,
    ).toBe(403);
    expect((await call(ben.token, 'DELETE', `/api/log-metrics/${m.id}`)).statusCode).toBe(403);
    expect((await call(cy.token, 'DELETE', `/api/log-metrics/${m.id}`)).statusCode).toBe(404);
    const ingest = (await t.rt.services.tokens.create(ada.id, { token_type: 'INGEST', name: 'shipper' }))
      .secret_key;
    expect((await call(ingest, 'GET', '/api/log-metrics')).statusCode).toBe(403);
    expect((await call(ingest, 'POST', '/api/log-metrics', { name: 'by_ingest' })).statusCode).toBe(403);
    const everyone = await call(ada.token, 'PATCH', `/api/log-metrics/${m.id}`, {
      shared_with: { everyone: true },
    });
    expect(everyone.json().shared_with).toEqual({ teams: [team], everyone: true });
    expect(await names(cy.token)).toEqual(['ops_latency']);
  });

  it('resets when what it counts changes (counting_since, backfilled), not when it is renamed; audited', async () => {
    const made = await call(ada.token, 'POST', '/api/log-metrics', {
      name: 'bytes_added',
      kind: 'sum',
      field: 'bytes',
      labels: ['app'],
    });
    expect(made.statusCode, made.body).toBe(201);
    const m = made.json();
    await sleep(5);
    const renamed = (
      await call(ada.token, 'PATCH', `/api/log-metrics/${m.id}`, { name: 'bytes_by_app', retention_days: 30 })
    ).json();
    expect(renamed).toMatchObject({
      name: 'bytes_by_app',
      retention_days: 30,
      counting_since: m.counting_since,
    });
    await sleep(5);
    const changed = await call(ada.token, 'PATCH', `/api/log-metrics/${m.id}`, { query: 'app:nginx' });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json().counting_since > m.counting_since).toBe(true);
    expect(changed.json().counting_since).toBe(changed.json().updated_at);
    // A kind without a field drops it; PUT returns what it leaves out to the defaults.
    const counted = (await call(ada.token, 'PATCH', `/api/log-metrics/${m.id}`, { kind: 'count' })).json();
    expect(counted).toMatchObject({ kind: 'count', field: null, labels: ['app'] });
    const put = await call(ada.token, 'PUT', `/api/log-metrics/${m.id}`, { name: 'bytes_by_app' });
    expect(put.json()).toMatchObject({ query: '', labels: [], retention_days: 400, kind: 'count' });
    await t.rt.services.audit.flush();
    const audit = (await call(t.adminToken, 'GET', '/api/audit?action=log_metric.update')).json();
    const mine = (
      audit.results as Array<{ target: { id: string }; detail: { changed: string[]; reset: boolean } }>
    )
      .filter((r) => r.target.id === String(m.id))
      .map((r) => r.detail);
    expect(mine).toContainEqual({ changed: ['name', 'retention_days'], reset: false });
    expect(mine).toContainEqual({ changed: ['query'], reset: true });
  });

  it('lists by name, kind, owner and ordering; an unknown ordering is a 400', async () => {
    expect(await names(t.adminToken, '?show_all=true&name=NGINX')).toEqual(['nginx_errors']);
    expect(await names(t.adminToken, '?show_all=true&kind=quantiles')).toEqual(['ops_latency']);
    expect(await names(t.adminToken, `?show_all=true&owner=${ben.id}&ordering=-name`)).toEqual([
      'b4',
      'b3',
      'b2',
      'b1',
    ]);
    expect((await call(ada.token, 'GET', '/api/log-metrics?ordering=size')).statusCode).toBe(400);
    expect((await call(ada.token, 'GET', '/api/log-metrics?kind=median')).statusCode).toBe(400);
  });

  it("deletes a metric (204, then 404), and a deleted user's metrics with them", async () => {
    const id = (await call(ada.token, 'POST', '/api/log-metrics', { name: 'gone_soon' })).json().id;
    expect((await call(ada.token, 'DELETE', `/api/log-metrics/${id}`)).statusCode).toBe(204);
    expect((await call(ada.token, 'GET', `/api/log-metrics/${id}`)).statusCode).toBe(404);
    // A name freed by a delete can be taken again.
    expect((await call(ben.token, 'POST', '/api/log-metrics', { name: 'gone_soon' })).statusCode).toBe(409); // ben is at his limit
    expect((await call(cy.token, 'POST', '/api/log-metrics', { name: 'gone_soon' })).statusCode).toBe(201);
    expect((await call(t.adminToken, 'DELETE', `/api/users/${ben.id}`)).statusCode).toBe(204);
    expect(await names(t.adminToken, `?show_all=true&owner=${ben.id}`)).toEqual([]);
  });
});
