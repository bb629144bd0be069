import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

/** The value of a sample line (`name{labels} value`) in Prometheus text, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe(`/metrics on ${BACKEND}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  const scrape = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return res.body;
  };

  it('needs no token and counts what ingest, triggers and HTTP did', async () => {
    const before = await scrape();
    expect(sample(before, 'logscope_ingest_events_total')).toBe(0);
    expect(before).toContain('logscope_process_cpu_user_seconds_total');
    await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/triggers',
      payload: { name: 'boom', query: 'boom' },
    });
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: '{"message":"boom 1"}\n{"message":"fine"}\nnot json\n',
    });
    expect(res.json()).toMatchObject({ accepted: 2, rejected: 1 });
    await t.rt.services.triggers.idle();
    const after = await scrape();
    expect(sample(after, 'logscope_ingest_events_total')).toBe(2);
    expect(sample(after, 'logscope_ingest_rejected_total')).toBe(1);
    expect(sample(after, 'logscope_ingest_commits_total')).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'logscope_triggers_enabled')).toBe(1);
    expect(sample(after, 'logscope_trigger_matches_total')).toBe(1);
    expect(sample(after, 'logscope_live_connections')).toBe(0);
    // A single server sends its notifications; a cluster node that holds the lease does too.
    expect(sample(after, 'logscope_alert_notifier')).toBe(1);
    // Requests are labelled by route pattern, not by URL.
    expect(after).toMatch(
      /logscope_http_request_duration_seconds_count\{method="POST",route="\/api\/ingest",status="200"\} 1/,
    );
    await t.as(t.adminToken, { method: 'GET', url: '/api/tasks/12345' });
    expect(await scrape()).toMatch(/route="\/api\/tasks\/:id",status="404"/);
  });

  it('tells events stored, store bytes, oldest event age and reports by status, read at most every 10 s', async () => {
    const old = new Date(Date.now() - 3_600_000).toISOString();
    await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: `{"message":"an hour ago","timestamp":"${old}"}\n`,
    });
    // The store figures of the first test's scrapes are reused for 10 s: move the clock on.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 11_000 });
    try {
      const text = await scrape();
      expect(sample(text, 'logscope_events_stored')).toBe(3);
      expect(sample(text, 'logscope_event_store_bytes')).toBeGreaterThan(0);
      const age = sample(text, 'logscope_oldest_event_age_seconds') ?? 0;
      expect(age).toBeGreaterThan(3_600);
      expect(age).toBeLessThan(3_700);
      expect(sample(text, 'logscope_reports{status="READY"}')).toBe(0);
      expect(sample(text, 'logscope_reports{status="PENDING"}')).toBe(0);
      // Within the 10 s the figures are not read again.
      await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/ingest',
        headers: { 'content-type': 'application/x-ndjson' },
        payload: '{"message":"one more"}\n',
      });
      expect(sample(await scrape(), 'logscope_events_stored')).toBe(3);
      vi.setSystemTime(Date.now() + 11_000);
      expect(sample(await scrape(), 'logscope_events_stored')).toBe(4);
    } finally {
      vi.useRealTimers();
    }
  });

  it('ignores query parameters it does not know, as every route does (docs/api/conventions.md)', async () => {
    // A scrape config's `params` reach the target as query parameters.
    const names = (text: string) => text.split('\n').filter((l) => l.startsWith('# TYPE '));
    const plain = names(await scrape());
    for (const qs of ['foo=1', 'foo=1&foo=2', 'match%5B%5D=up', 'format=prometheus', '__proto__=1']) {
      const res = await t.app.inject({ method: 'GET', url: `/metrics?${qs}` });
      expect(res.statusCode, qs).toBe(200);
      expect(res.headers['content-type'], qs).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(names(res.body), qs).toEqual(plain);
    }
  });

  it('is listed in the OpenAPI document as public Prometheus text', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/schema' });
    const op = res.json().paths['/metrics'].get;
    expect(op.security).toEqual([]);
    expect(Object.keys(op.responses['200'].content)).toEqual(['text/plain; version=0.0.4; charset=utf-8']);
  });
});
