import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { receiver } from '../../helpers/webhook-receiver.js';

type Who = { id: number; token: string };

/**
 * A schedule's reports from outside: the report webhook signed with the channel's secret
 * as an alert's is (docs/api/alerting.md), and `GET /api/reports?schedule_id=` listing
 * only the reports one schedule made (the web UI's link from a schedule to its reports).
 */
describe(`a schedule's reports on ${BACKEND}`, () => {
  let t: TestApp;
  let ada: Who;
  let ben: Who;
  let search: number;
  let hook: Awaited<ReturnType<typeof receiver>>;
  const SECRET = 'report-hook-secret';
  const call = (token: string, method: 'GET' | 'POST', url: string, payload?: object) =>
    t.as(token, { method, url, ...(payload ? { payload } : {}) });

  beforeAll(async () => {
    hook = await receiver();
    t = await createTestApp({ LOGSCOPE_PUBLIC_URL: 'http://logs.example.test' });
    ada = await t.user('ada');
    ben = await t.user('ben');
    const ingested = await call(t.adminToken, 'POST', '/api/ingest', [
      { ts: new Date(Date.now() - 60_000).toISOString(), host: 'h1', app: 'web', message: 'hello' },
    ]);
    expect(ingested.json()).toMatchObject({ accepted: 1, rejected: 0 });
    search = (await call(ada.token, 'POST', '/api/saved-searches', { title: 'Web', query: 'app:web' })).json()
      .id;
  });
  afterAll(async () => {
    await t?.close();
    await hook?.close();
  });

  const schedule = async (name: string, deliverTo: number[] = []) => {
    const res = await call(ada.token, 'POST', '/api/schedules', {
      name,
      source: { saved_search_id: search },
      format: 'csv',
      time_range: { preset: 'last_hour' },
      cron: '0 9 * * *',
      deliver_to: deliverTo,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().id as number;
  };
  const runNow = async (id: number) => {
    const res = await call(ada.token, 'POST', `/api/schedules/${id}/run`);
    expect(res.statusCode, res.body).toBe(202);
    await t.rt.services.scheduleRunner.idle();
    const s = (await call(ada.token, 'GET', `/api/schedules/${id}`)).json();
    expect(s.last_run, JSON.stringify(s.last_run)).toMatchObject({ status: 'ok' });
    return s as { id: number; last_run: { report_id: number; at: string } };
  };

  it('signs the report webhook with the channel’s secret: X-Logscope-Signature, the HMAC of the body sent', async () => {
    const channel = await call(ada.token, 'POST', '/api/channels', {
      name: 'signed hook',
      type: 'webhook',
      config: { url: hook.url, secret: SECRET },
    });
    expect(channel.statusCode, channel.body).toBe(201);
    const s = await runNow(await schedule('Signed', [channel.json().id]));
    const got = await eventually('the report webhook', () => hook.got[0]);
    const body = JSON.parse(got.body);
    expect(body).toMatchObject({
      kind: 'report',
      schedule: { id: s.id, name: 'Signed' },
      report: { id: s.last_run.report_id },
      run: { at: s.last_run.at, trigger: 'manual' },
    });
    const expected = createHmac('sha256', SECRET).update(got.body).digest('hex');
    expect(got.headers['x-logscope-signature']).toBe(`sha256=${expected}`);
    // Not a signature of something else: another key gives another one.
    expect(createHmac('sha256', `${SECRET}x`).update(got.body).digest('hex')).not.toBe(expected);
  });

  it('lists only one schedule’s reports with schedule_id, the caller’s own', async () => {
    const first = await schedule('First');
    const second = await schedule('Second');
    const a = await runNow(first);
    const b = await runNow(second);
    const c = await runNow(first);
    const onDemand = await call(ada.token, 'POST', '/api/reports', {
      ftype: 'csv',
      source: { kind: 'query', query: { type: 'Search', params: { query: 'app:web' } } },
    });
    expect(onDemand.statusCode, onDemand.body).toBe(202);
    const ids = async (token: string, query: string) => {
      const res = await call(token, 'GET', `/api/reports?ordering=id${query}`);
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().results as Array<{ id: number; schedule_id: number | null }>).map((r) => [
        r.id,
        r.schedule_id,
      ]);
    };
    expect(await ids(ada.token, `&schedule_id=${first}`)).toEqual([
      [a.last_run.report_id, first],
      [c.last_run.report_id, first],
    ]);
    expect(await ids(ada.token, `&schedule_id=${second}`)).toEqual([[b.last_run.report_id, second]]);
    expect((await ids(ada.token, '')).length).toBe(5);
    // Another user's view of them: none (reports are their owner's).
    expect(await ids(ben.token, `&schedule_id=${first}`)).toEqual([]);
    expect((await call(ada.token, 'GET', '/api/reports?schedule_id=0')).statusCode).toBe(400);
    expect((await call(ada.token, 'GET', '/api/reports?schedule_id=x')).statusCode).toBe(400);
  });
});
