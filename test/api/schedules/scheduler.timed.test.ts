// ci: waits for the clock (the next cron minute): CI runs it beside the other timed files (scripts/ci/run-suite.sh).
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { COMPONENTS } from '../../../src/features/index.js';
import { migrationsOf } from '../../../src/features/root.js';
import { openMetadataDb } from '../../../src/metadata/database.js';
import { openRuntime, type Runtime } from '../../../src/runtime.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';

const HOUR = 3_600_000;

/**
 * The scheduler with a real clock: slots missed while the server was down run once at
 * start, and a schedule due at the next minute runs at that minute, not before, while its
 * disabled twin stays idle.
 */
describe(`the scheduler on ${BACKEND}`, () => {
  let t: TestApp;
  let rt: Runtime;
  let app: FastifyInstance;
  let ada: { id: number; token: string };
  let search: number;
  const call = (token: string, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    app.inject({
      method,
      url,
      headers: { authorization: `token ${token}` },
      ...(payload ? { payload } : {}),
    });
  const schedule = async (body: object) => {
    const res = await call(ada.token, 'POST', '/api/schedules', {
      source: { saved_search_id: search },
      format: 'csv',
      time_range: { preset: 'last_1_hours' },
      ...body,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; next_run_at: string | null };
  };
  const reportsOf = async (id: number) =>
    (
      (await call(ada.token, 'GET', '/api/reports?page_size=1000')).json().results as Array<{
        schedule_id: number;
      }>
    ).filter((r) => r.schedule_id === id);

  beforeAll(async () => {
    t = await createTestApp();
    rt = t.rt;
    app = t.app;
    ada = await t.user('ada');
    search = (await call(ada.token, 'POST', '/api/saved-searches', { title: 'All', query: '' })).json().id;
  });
  afterAll(async () => {
    if (app !== t.app) {
      await app.close();
      await rt.close();
    }
    await t.close();
  });

  it('runs the slots missed while the server was down once at start, then waits for the next', async () => {
    const hourly = await schedule({ name: 'Hourly', cron: '0 * * * *' });
    await app.close();
    await rt.close();
    // Down for three hours and a bit: the store as a server stopped then would have left it.
    const lastSlot = Math.floor(Date.now() / HOUR) * HOUR;
    const missedFrom = lastSlot - 3 * HOUR;
    const config = t.rt.platform.config;
    const meta = await openMetadataDb({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      migrations: migrationsOf(COMPONENTS),
      ...(t.pgSchema ? { pgSchema: t.pgSchema } : {}),
    });
    await meta.db
      .updateTable('schedules')
      .set({ next_run_at: missedFrom })
      .where('id', '=', hourly.id)
      .execute();
    await meta.close();
    rt = await openRuntime(config, t.pgSchema ? { pgSchema: t.pgSchema } : {});
    app = await buildApp({ root: rt.root, checks: [] });

    const ran = await eventually('the run at start', async () => {
      const s = (await call(ada.token, 'GET', `/api/schedules/${hourly.id}`)).json();
      return s.last_run && s.last_run.status !== 'running' ? s : undefined;
    });
    expect(ran.last_run).toMatchObject({ trigger: 'cron', status: 'ok' });
    expect(Date.parse(ran.next_run_at)).toBe(lastSlot + HOUR);
    // A second and a half later still one run, one report, one audit record saying how many slots passed.
    await new Promise((r) => setTimeout(r, 1500));
    await rt.services.scheduleRunner.idle();
    expect(await reportsOf(hourly.id)).toHaveLength(1);
    await rt.services.audit.flush();
    const audit = (await call(t.adminToken, 'GET', '/api/audit?action=schedule.run')).json();
    expect(audit.count).toBe(1);
    expect(audit.results[0]).toMatchObject({
      target: { kind: 'schedule', id: String(hourly.id) },
      actor: { user_id: ada.id, token_key_id: null, address: null },
      detail: { trigger: 'cron', status: 'ok', missed: 4 },
    });
  });

  it('runs a schedule at its minute, not before, and leaves its disabled twin idle', async () => {
    const every = await schedule({ name: 'Every minute', cron: '* * * * *' });
    const twin = await schedule({ name: 'Twin', cron: '* * * * *', enabled: false });
    expect(twin.next_run_at).toBeNull();
    const due = Date.parse(every.next_run_at as string);
    expect(due % 60_000).toBe(0);
    expect(due).toBeGreaterThan(Date.now());
    const ran = await eventually(
      'the run at its minute',
      async () => {
        const s = (await call(ada.token, 'GET', `/api/schedules/${every.id}`)).json();
        if (s.last_run) return { s, seen: Date.now() };
        // Not before its minute.
        expect(Date.now()).toBeLessThan(due + 10_000);
        return undefined;
      },
      { withinMs: 75_000, everyMs: 250 },
    );
    const at = Date.parse(ran.s.last_run.at);
    expect(at).toBeGreaterThanOrEqual(due);
    expect(at - due).toBeLessThan(5000);
    expect(ran.s.last_run.trigger).toBe('cron');
    expect(Date.parse(ran.s.next_run_at)).toBe(due + 60_000);
    await rt.services.scheduleRunner.idle();
    expect((await call(ada.token, 'GET', `/api/schedules/${every.id}`)).json().last_run.status).toBe('ok');
    expect(await reportsOf(every.id)).toHaveLength(1);
    expect((await call(ada.token, 'GET', `/api/schedules/${twin.id}`)).json().last_run).toBeNull();
    expect(await reportsOf(twin.id)).toHaveLength(0);
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body;
    // One run late by hours at start, one on time.
    expect(metrics).toMatch(/logscope_schedule_lateness_seconds_count 2\b/);
    expect(metrics).toMatch(/logscope_schedule_lateness_seconds_bucket\{le="5"\} 1\b/);
    expect(metrics).toMatch(/logscope_schedule_runs_total\{trigger="cron",status="ok"\} 2\b/);
  }, 85_000);
});
