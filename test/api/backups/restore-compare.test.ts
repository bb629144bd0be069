import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/config/config.js';
import { restoreBackup, verifyBackup } from '../../../src/features/backups/index.js';
import { readManifest } from '../../../src/features/backups/manifest.js';
import { healthChecks, openRuntime, type Runtime } from '../../../src/runtime.js';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { event, HOUR, seedWeb, T0 } from '../../helpers/seed.js';
import { oldEventsMovedCold } from './cold-fixture.js';

// A backup taken by a running server, verified and restored into a new data dir: the
// restored server answers the same queries with the same ev_ids and holds every object
// (docs/api/backups.md "What comes back"), hot and cold events each in their tier, old
// tokens working.
const embedded = BACKEND === 'sqlite' && EVENT_STORE === 'duckdb';

describe.runIf(embedded)('restore of an online backup', () => {
  let t: TestApp;
  let root: string;
  let restored: { rt: Runtime; app: FastifyInstance } | null = null;
  let reader: { id: number; token: string };
  let reportId: number;
  const answers: Record<string, unknown> = {};

  const calls: Array<[string, InjectOptions]> = [];
  const ask = (app: FastifyInstance, token: string, opts: InjectOptions) =>
    app.inject({ ...opts, headers: { authorization: `token ${token}`, ...opts.headers } });
  /** The answers compared before and after: what each call returns, without what may differ. */
  const snapshotOf = async (app: FastifyInstance) => {
    const out: Record<string, unknown> = {};
    for (const [name, opts] of calls) {
      const res = await ask(app, name.startsWith('reader:') ? reader.token : t.adminToken, opts);
      expect(res.statusCode, `${name}: ${res.body}`).toBe(200);
      const body = res.json();
      // A query's own record differs (a new job): its id and times.
      if (opts.url === '/api/query')
        for (const k of ['query_id', 'created_at', 'updated_at', 'base_time']) delete body[k];
      out[name] = strip(body);
    }
    return out;
  };

  beforeAll(async () => {
    t = await createTestApp();
    root = mkdtempSync(path.join(tmpdir(), 'logscope-restore-'));
    await seedWeb(t);
    // Old events moved cold: the stream Old keeps 2 days hot (Default all its days).
    await oldEventsMovedCold(t, [5], 30);
    const now = Date.now();
    // Objects of every kind the comparison reads.
    reader = await t.user('rita', { permissions: [] });
    const nginx = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/streams',
      payload: { title: 'Nginx', rule: 'app:nginx', readers: { users: [reader.id], teams: [] } },
    });
    expect(nginx.statusCode, nginx.body).toBe(201);
    const dash = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/dashboards',
      payload: { title: 'Ops' },
    });
    expect(dash.statusCode, dash.body).toBe(201);
    const saved = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/saved-searches',
      payload: { title: 'errors', query: 'severity:error' },
    });
    expect(saved.statusCode, saved.body).toBe(201);
    const channel = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/channels',
      payload: {
        name: 'ops hook',
        type: 'webhook',
        config: { url: 'http://127.0.0.1:9/x', secret: 's3cret' },
      },
    });
    expect(channel.statusCode, channel.body).toBe(201);
    // A log metric with counts kept at ingest, and a report with its file.
    const metric = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/log-metrics',
      payload: { name: 'kept_counts', query: 'app:counted', labels: ['host'] },
    });
    expect(metric.statusCode, metric.body).toBe(201);
    const counted = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      payload: Array.from({ length: 20 }, (_, i) => ({
        app: 'counted',
        host: `h${i % 3}`,
        message: `counted ${i}`,
      })),
    });
    expect(counted.statusCode, counted.body).toBe(200);
    const report = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/reports',
      payload: {
        ftype: 'csv',
        source: { kind: 'query', query: { type: 'Search', params: { time_range: HOUR } } },
      },
    });
    expect(report.statusCode, report.body).toBe(202);
    await t.rt.services.reports.idle();
    reportId = report.json().id;
    const nowS = Math.floor(Date.now() / 1000);
    const search = (query: string, extra: object = {}) => ({
      method: 'POST' as const,
      url: '/api/query',
      payload: {
        type: 'Search',
        params: { query, time_range: HOUR, page_size: 50, ...extra },
      },
    });
    calls.push(
      ['search', search('status:500')],
      ['search page 3', search('*', { page: 3 })],
      ['reader:search', search('*')],
      [
        'top hosts',
        {
          method: 'POST',
          url: '/api/query',
          payload: { type: 'TopN', params: { field: 'host', time_range: HOUR } },
        },
      ],
      [
        'cold search',
        search('app:old', {
          time_range: { ts_from: Math.floor(now / 1000) - 7 * 86_400, ts_to: Math.floor(now / 1000) },
        }),
      ],
      ['streams', { method: 'GET', url: '/api/streams' }],
      ['reader:streams', { method: 'GET', url: '/api/streams' }],
      ['dashboards', { method: 'GET', url: '/api/dashboards' }],
      ['saved searches', { method: 'GET', url: '/api/saved-searches' }],
      ['users', { method: 'GET', url: '/api/users' }],
      ['cold files', { method: 'GET', url: '/api/cold/files' }],
      ['channels', { method: 'GET', url: '/api/channels' }],
      ['reports', { method: 'GET', url: '/api/reports' }],
      [
        'metric series',
        {
          method: 'GET',
          url: `/api/log-metrics/${metric.json().id}/series?from=${nowS - 3600}&to=${nowS + 60}`,
        },
      ],
    );
    Object.assign(answers, await snapshotOf(t.app));
    // What is compared holds something: the metric's 20 events, counted at ingest.
    const series = (answers['metric series'] as { series: Array<{ total: { events: number } }> }).series;
    expect(series.reduce((n, x) => n + x.total.events, 0)).toBe(20);
  });
  afterAll(async () => {
    if (restored) {
      await restored.app.close();
      await restored.rt.close();
    }
    await t.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('verifies, restores, and serves the same answers, objects and events, old tokens working', async () => {
    const dir = path.join(root, 'backup');
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/admin/backups',
      payload: { path: dir },
    });
    expect(res.statusCode, res.body).toBe(202);
    const job = await eventually('the backup', async () => {
      const j = (
        await t.as(t.adminToken, { method: 'GET', url: `/api/admin/backups/${res.json().id}` })
      ).json();
      return j.status !== 'RUNNING' && j;
    });
    expect(job.status, JSON.stringify(job.error)).toBe('DONE');
    expect(job.counts.events).toEqual({ hot: 620, cold: 30 });
    const verified = await verifyBackup(dir);
    expect(verified.problems).toEqual([]);
    expect(verified.ok).toBe(true);

    const dataDir = path.join(root, 'restored');
    const summary = await restoreBackup({ dir, dataDir, force: false });
    expect(summary.events).toEqual({ hot: 620, cold: 30 });
    const config = loadConfig({ env: { LOGSCOPE_DATA_DIR: dataDir, LOGSCOPE_QUERY_SYNC_MS: '30000' } });
    const rt = await openRuntime(config);
    const app = await buildApp({ root: rt.root, checks: healthChecks(rt) });
    restored = { rt, app };
    expect(await snapshotOf(app)).toEqual(answers);
    // One event, raw included, by id.
    const some = (answers.search as { results: { events: Array<{ ev_id: string }> } }).results.events[0]
      ?.ev_id as string;
    expect(some).toBeTruthy();
    const before = await t.as(t.adminToken, { method: 'GET', url: `/api/events/${some}` });
    const after = await ask(app, t.adminToken, { method: 'GET', url: `/api/events/${some}` });
    expect(after.json()).toEqual(before.json());
    // The report's file, byte for byte; the channel's secret as stored.
    const file = (app: FastifyInstance) =>
      ask(app, t.adminToken, { method: 'GET', url: `/api/reports/${reportId}/file` });
    const [fileBefore, fileAfter] = [await file(t.app), await file(app)];
    expect(fileAfter.statusCode).toBe(200);
    expect(fileAfter.rawPayload.equals(fileBefore.rawPayload)).toBe(true);
    const configs = (r: Runtime) =>
      r.meta.db.selectFrom('channels').select(['id', 'config']).orderBy('id').execute();
    expect(await configs(rt)).toEqual(await configs(t.rt));
    expect(JSON.stringify(await configs(rt))).toContain('s3cret');
    // The cold tier verifies on the restored server.
    const cold = await ask(app, t.adminToken, { method: 'POST', url: '/api/cold/verify', payload: {} });
    expect(cold.json().problems).toEqual([]);
    // The restore is recorded in the restored audit trail.
    const audit = await ask(app, t.adminToken, { method: 'GET', url: '/api/audit?action=backup.restore' });
    expect(audit.json().results[0]?.detail.backup_id).toBe(job.id);
  }, 60_000);
});

/** An answer without what may differ after a restore: query ids, timings, use times. */
function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value))
      if (
        ![
          'qid',
          'id_query',
          'elapsed_ms',
          'took_ms',
          'last_used_at',
          'as_of',
          'started_at',
          'finished_at',
          'created_at_query',
          'links',
          'url',
          'next',
          'previous',
        ].includes(k)
      )
        out[k] = strip(v);
    return out;
  }
  return value;
}

describe.runIf(embedded)('an incremental backup', () => {
  let t: TestApp;
  let root: string;
  let seeded: Awaited<ReturnType<typeof seedWeb>>;
  const opened: Array<{ rt: Runtime; app: FastifyInstance }> = [];
  beforeAll(async () => {
    t = await createTestApp();
    root = mkdtempSync(path.join(tmpdir(), 'logscope-incremental-'));
    seeded = await seedWeb(t);
    await oldEventsMovedCold(t, [5], 30);
  });
  afterAll(async () => {
    for (const o of opened) {
      await o.app.close();
      await o.rt.close();
    }
    await t.close();
    rmSync(root, { recursive: true, force: true });
  });

  const backup = async (body: object) => {
    const res = await t.as(t.adminToken, { method: 'POST', url: '/api/admin/backups', payload: body });
    expect(res.statusCode, res.body).toBe(202);
    const job = await eventually('the backup', async () => {
      const j = (
        await t.as(t.adminToken, { method: 'GET', url: `/api/admin/backups/${res.json().id}` })
      ).json();
      return j.status !== 'RUNNING' && j;
    });
    expect(job.status, JSON.stringify(job.error)).toBe('DONE');
    return job;
  };
  const search = (query: string) => ({
    method: 'POST' as const,
    url: '/api/query',
    payload: { type: 'Search', params: { query, time_range: HOUR, page_size: 1000 } },
  });
  const evIdsOf = async (app: FastifyInstance, query: string) =>
    (
      (await app.inject({ ...search(query), headers: { authorization: `token ${t.adminToken}` } })).json()
        .results.events as Array<{ ev_id: string; pattern_id: string }>
    ).map((e) => `${e.ev_id} ${e.pattern_id}`);

  it('holds only what changed since its base, and restores with its chain to the same answers', async () => {
    const full = path.join(root, 'full');
    await backup({ path: full });
    // After the base: new events, events changed in place (new pattern ids), events deleted.
    const added = Array.from({ length: 25 }, (_, i) =>
      event({ ts: T0 + 3_000_000 + i * 1000, app: 'added', message: `added ${i}` }),
    );
    await t.rt.events.append(added);
    // A re-mine of the first ten minutes (100 events): 10 of them get a new pattern id.
    const some = seeded
      .filter((e) => e.ts >= T0 + 60_000 && e.ts < T0 + 600_000 && e.status === 404)
      .slice(0, 10);
    expect(some).toHaveLength(10);
    await t.rt.events.setPatternIds(
      { fromMs: T0, toMs: T0 + 600_000 },
      some.map((e) => [e.ev_id, 'p-changed'] as const),
    );
    // Retention deletes the first minute's 10 events.
    expect(await t.rt.events.deleteOlderThan(T0 + 60_000)).toBe(10);
    const incremental = path.join(root, 'incremental');
    const job = await backup({ path: incremental, since: full });
    expect(job.kind).toBe('incremental');
    expect(job.counts.events).toEqual({ hot: 615, cold: 30 });
    const read = await readManifest(incremental);
    if ('problem' in read) throw new Error(read.problem);
    const m = read.manifest;
    expect(m.base?.path).toBe(full);
    // No cold file again; the hot parts hold the new events and those changed in place only
    // (the changed range's others with them: a re-mine's range is held whole).
    expect(m.files.filter((f) => f.kind === 'cold')).toEqual([]);
    expect(m.inherited.map((f) => f.from)).toEqual([expect.any(String)]);
    const hotRows = m.files.filter((f) => f.kind === 'hot').reduce((n, f) => n + (f.rows ?? 0), 0);
    expect(hotRows).toBe(115);
    expect(m.files.find((f) => f.kind === 'hot_ids')?.rows).toBe(615);
    expect((await verifyBackup(incremental)).problems).toEqual([]);

    const dataDir = path.join(root, 'restored');
    const summary = await restoreBackup({ dir: incremental, dataDir, force: false });
    expect(summary.events).toEqual({ hot: 615, cold: 30 });
    const rt = await openRuntime(
      loadConfig({ env: { LOGSCOPE_DATA_DIR: dataDir, LOGSCOPE_QUERY_SYNC_MS: '30000' } }),
    );
    const app = await buildApp({ root: rt.root, checks: healthChecks(rt) });
    opened.push({ rt, app });
    for (const q of ['*', 'status:404', 'app:added'])
      expect((await evIdsOf(app, q)).sort(), q).toEqual((await evIdsOf(t.app, q)).sort());
    expect((await evIdsOf(app, 'status:404')).filter((x) => x.endsWith('p-changed'))).toHaveLength(10);
  }, 60_000);
});
