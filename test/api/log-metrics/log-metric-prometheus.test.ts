import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { twoReaders, type Who } from './two-readers.js';

/** The samples of an exposition: `name{labels}` → value (comments left out). */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

/**
 * The Prometheus exposition of log metrics (docs/api/log-metrics.md "Prometheus"): the text
 * format, each reader's own sums, cumulative counters, the last ended bucket's quantiles,
 * label names and escaping, who is refused. A real Prometheus scraping it is
 * test/process/shippers/prometheus.test.ts.
 */
describe.runIf(EVENT_STORE === 'duckdb')(`the log metrics' Prometheus exposition on ${BACKEND}`, () => {
  let t: TestApp;
  let ada: Who;
  let ben: Who;
  let ingest: (events: object[]) => Promise<void>;
  const HOUR = 3_600_000;
  // Hourly buckets: the events go in the last three, so whichever hour has just ended when
  // the scrape is made holds the same values.
  const hour = Math.floor(Date.now() / HOUR) * HOUR;
  const iso = (ms: number) => new Date(ms).toISOString();
  const call = (token: string, method: 'GET' | 'POST', url: string, payload?: object) =>
    t.as(token, { method, url, ...(payload ? { payload } : {}) });
  const metric = async (body: object) => {
    const res = await call(ada.token, 'POST', '/api/log-metrics', {
      shared_with: { everyone: true },
      ...body,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number };
  };
  const scrape = async (token: string, qs = '') => {
    const res = await call(token, 'GET', `/api/log-metrics/prometheus${qs}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    return res.body;
  };

  beforeAll(async () => {
    // The buckets' upkeep every second (retention, merging rows).
    ({ t, ada, ben, ingest } = await twoReaders({ LOGSCOPE_RETENTION_INTERVAL_SECONDS: '1' }));
  });
  afterAll(() => t?.close());

  it('writes each kind’s families; each reader’s counters sum only the streams they may read, and only grow', async () => {
    await metric({ name: 'errors', query: 'severity:error', labels: ['app', 'http.method'] });
    await metric({
      name: 'latency_ms',
      kind: 'quantiles',
      field: 'ms',
      quantiles: [0.5, 0.9],
      labels: ['app'],
      resolution_seconds: 3600,
      description: 'Request time.\nIn ms, with a \\ in it.',
    });
    await metric({ name: 'slowest_ms', kind: 'max', field: 'ms', resolution_seconds: 3600 });
    const sent = [];
    for (const h of [hour - 2 * HOUR, hour - HOUR, hour])
      for (let i = 1; i <= 10; i++)
        sent.push({ ts: iso(h + i * 1000), app: 'api', ms: i * 10, message: `GET took ${i * 10}` });
    sent.push(
      {
        ts: iso(hour - 5_000),
        app: 'payments',
        severity: 'error',
        'http.method': 'POST',
        message: 'declined',
      },
      {
        ts: iso(hour - 4_000),
        app: 'payments',
        severity: 'error',
        'http.method': 'POST',
        message: 'declined',
      },
      { ts: iso(hour - 3_000), app: 'we"b\\', severity: 'error', message: 'upstream\ntimed out' },
    );
    await ingest(sent);

    const mine = await scrape(ada.token);
    expect(mine).toContain('# TYPE errors_total counter\n');
    expect(mine).toContain('# HELP errors_total Log metric errors: severity:error\n');
    expect(mine).toContain('# HELP latency_ms_total Request time.\\nIn ms, with a \\\\ in it.\n');
    expect(mine).toContain('# TYPE latency_ms summary\n');
    expect(mine).toContain('# TYPE slowest_ms gauge\n');
    const s = samples(mine);
    expect(s.get('errors_total{app="payments",http_method="POST"}')).toBe(2);
    // An empty value is an absent label; quotes and backslashes escaped.
    expect(s.get('errors_total{app="we\\"b\\\\"}')).toBe(1);
    expect(s.get('latency_ms_total{app="api"}')).toBe(30);
    expect(s.get('latency_ms_count{app="api"}')).toBe(30);
    expect(s.get('latency_ms_sum{app="api"}')).toBe(3 * 550);
    // The last ended hour's quantiles: 10..100 by 10, within 1 %.
    expect(Math.abs((s.get('latency_ms{app="api",quantile="0.5"}') as number) - 50)).toBeLessThanOrEqual(0.5);
    expect(Math.abs((s.get('latency_ms{app="api",quantile="0.9"}') as number) - 90)).toBeLessThanOrEqual(0.9);
    expect(s.get('slowest_ms')).toBeCloseTo(100, 0);
    expect(s.get('slowest_ms_total')).toBe(33);
    expect(s.get('logscope_log_metric_dropped_series{metric="errors"}')).toBe(0);

    // Ben may not read Payments: its errors are not in his counters.
    const his = samples(await scrape(ben.token));
    expect(his.has('errors_total{app="payments",http_method="POST"}')).toBe(false);
    expect(his.get('errors_total{app="we\\"b\\\\"}')).toBe(1);
    expect(his.get('slowest_ms_total')).toBe(31);

    // Cumulative: a late event in an old bucket adds to the counter.
    await ingest([{ ts: iso(hour - 30 * 86_400_000), app: 'payments', severity: 'error', message: 'late' }]);
    const later = samples(await scrape(ada.token, '?name=errors'));
    expect(later.get('errors_total{app="payments"}')).toBe(1);
    expect(later.get('errors_total{app="payments",http_method="POST"}')).toBe(2);
    expect([...later.keys()].some((k) => k.startsWith('latency_ms'))).toBe(false);
  });

  it('buckets past retention_days leave the series, not the counters', async () => {
    const m = await metric({ name: 'short_lived', query: 'app:brief', retention_days: 1 });
    const old = Date.now() - 3 * 86_400_000;
    await ingest([
      { ts: iso(old), app: 'brief', message: 'three days ago' },
      { ts: iso(Date.now() - 60_000), app: 'brief', message: 'a minute ago' },
    ]);
    const range = `from=${Math.floor(old / 1000) - 60}&to=${Math.floor(old / 1000) + 60}&step=60`;
    const oldSeries = async () =>
      (await call(ada.token, 'GET', `/api/log-metrics/${m.id}/series?${range}`)).json().series as unknown[];
    await eventually('the upkeep to take the old bucket', async () => (await oldSeries()).length === 0, {
      withinMs: 15_000,
      everyMs: 200,
    });
    expect(samples(await scrape(ada.token, '?name=short_lived')).get('short_lived_total')).toBe(2);
  });

  it('gzips when asked; an INGEST token is a 403, none or an unknown one a 401, and each is counted', async () => {
    const res = await t.as(ada.token, {
      method: 'GET',
      url: '/api/log-metrics/prometheus',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(res.rawPayload).toString()).toContain('# TYPE errors_total counter');
    const ingestToken = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'shipper' }))
      .secret_key;
    expect((await call(ingestToken, 'GET', '/api/log-metrics/prometheus')).statusCode).toBe(403);
    expect((await call('', 'GET', '/api/log-metrics/prometheus')).statusCode).toBe(401);
    expect((await call('nope', 'GET', '/api/log-metrics/prometheus')).statusCode).toBe(401);
    // Names that match nothing: an empty answer, not an error.
    expect(await scrape(ada.token, '?name=nothing_here')).toBe('');
    const metrics = (await t.as('', { method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/logscope_log_metric_scrapes_total\{outcome="ok"\} [1-9]/);
    expect(metrics).toContain('logscope_log_metric_scrapes_total{outcome="forbidden"} 1');
    expect(metrics).toContain('logscope_log_metric_scrapes_total{outcome="unauthorized"} 2');
  });
});
