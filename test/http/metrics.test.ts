import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../helpers/app.js';

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
    // Requests are labelled by route pattern, not by URL.
    expect(after).toMatch(
      /logscope_http_request_duration_seconds_count\{method="POST",route="\/api\/ingest",status="200"\} 1/,
    );
    await t.as(t.adminToken, { method: 'GET', url: '/api/tasks/12345' });
    expect(await scrape()).toMatch(/route="\/api\/tasks\/:id",status="404"/);
  });

  it('is listed in the OpenAPI document', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/schema' });
    expect(Object.keys(res.json().paths)).toContain('/metrics');
  });
});
