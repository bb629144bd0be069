import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, EVENT_STORE } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { freePort } from '../../helpers/served.js';
import {
  type Daemon,
  type Logscope,
  privateDir,
  skipFor,
  startDaemon,
  startLogscope,
  stopAllDaemons,
} from '../../helpers/shippers.js';

// Debian's prometheus (2.42), run as a private instance on a loopback port with its own
// config and data dir, scraping Logscope every second (`.ci/run` installs the package and
// leaves its service off).
const bin = [process.env.LOGSCOPE_TEST_PROMETHEUS, '/usr/bin/prometheus'].find((b) => b && existsSync(b));
const skip =
  EVENT_STORE !== 'duckdb' || skipFor('the Prometheus scrape test', bin ? undefined : 'install prometheus');

type Vector = Array<{ metric: Record<string, string>; value: [number, string] }>;

describe.skipIf(skip)(`a real Prometheus scraping the log metrics on ${BACKEND}`, () => {
  let ls: Logscope;
  let prometheus: Daemon;
  let api: string;
  const dir = privateDir('prometheus');

  const ingest = async (events: object[]) => {
    const res = await fetch(`${ls.url}/api/ingest`, {
      method: 'POST',
      headers: { authorization: `token ${ls.ingestToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(events),
    });
    expect(await res.json()).toMatchObject({ accepted: events.length });
  };
  const query = async (promql: string): Promise<Vector> => {
    const res = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await res.json()) as { status: string; data: { result: Vector } };
    expect(body.status, JSON.stringify(body)).toBe('success');
    return body.data.result;
  };
  const sampleOf = async (promql: string) => {
    const [first] = await query(promql);
    return first ? Number(first.value[1]) : undefined;
  };

  beforeAll(async () => {
    ls = await startLogscope();
    const as = (payload: object) =>
      ls.t.as(ls.t.adminToken, { method: 'POST', url: '/api/log-metrics', payload });
    expect((await as({ name: 'app_lines', labels: ['app'] })).statusCode).toBe(201);
    expect((await as({ name: 'bytes_sent', kind: 'sum', field: 'bytes', query: 'app:web' })).statusCode).toBe(
      201,
    );
    const target = new URL(ls.url).host;
    const port = await freePort();
    api = `http://127.0.0.1:${port}`;
    const config = path.join(dir.dir, 'prometheus.yml');
    writeFileSync(
      config,
      `global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: logscope
    metrics_path: /api/log-metrics/prometheus
    authorization: {credentials: ${ls.t.adminToken}}
    static_configs: [{targets: ["${target}"]}]
  - job_name: refused
    metrics_path: /api/log-metrics/prometheus
    authorization: {credentials: ${ls.ingestToken}}
    static_configs: [{targets: ["${target}"]}]
`,
    );
    prometheus = startDaemon(
      bin as string,
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${path.join(dir.dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      dir.dir,
    );
    await eventually(
      () => `Prometheus to answer\n${prometheus.output()}`,
      async () => {
        if (prometheus.exited()) throw new Error(`prometheus exited:\n${prometheus.output()}`);
        return (await fetch(`${api}/-/ready`)).ok;
      },
      { withinMs: 30_000, everyMs: 200, retryErrors: true },
    );
  }, 60_000);
  afterAll(async () => {
    await stopAllDaemons();
    await ls?.close();
    dir.remove();
  });

  it('reads the counters as they grow, so rate() and increase() give log rates; an INGEST token is refused', async () => {
    const line = (app: string, bytes: number) => ({ app, bytes, message: `GET / ${bytes}` });
    await ingest([...Array.from({ length: 7 }, (_, i) => line('web', 100 * (i + 1))), line('db', 5)]);
    await eventually(
      'Prometheus to scrape 7 web lines',
      async () => (await sampleOf('app_lines_total{app="web"}')) === 7,
      { withinMs: 20_000, everyMs: 250 },
    );
    expect(await sampleOf('app_lines_total{app="db"}')).toBe(1);
    expect(await sampleOf('bytes_sent_sum')).toBe(2800);
    expect(await sampleOf('bytes_sent_count')).toBe(7);
    expect(await sampleOf('up{job="logscope"}')).toBe(1);

    await ingest(Array.from({ length: 5 }, () => line('web', 1)));
    await eventually(
      'Prometheus to scrape 12 web lines',
      async () => (await sampleOf('app_lines_total{app="web"}')) === 12,
      { withinMs: 20_000, everyMs: 250 },
    );
    // Counters, cumulative across scrapes: the log rate over the last minute is positive
    // and the increase extrapolates from the 5 lines that came between scrapes.
    expect(await sampleOf('rate(app_lines_total{app="web"}[1m])')).toBeGreaterThan(0);
    expect(await sampleOf('increase(app_lines_total{app="web"}[1m])')).toBeGreaterThanOrEqual(5);
    expect(await sampleOf('resets(app_lines_total[1m])')).toBe(0);

    // The INGEST token's job: a 403 Prometheus reports as the target's error.
    const targets = await eventually('the refused target to be scraped', async () => {
      const res = await fetch(`${api}/api/v1/targets`);
      const body = (await res.json()) as {
        data: { activeTargets: Array<{ labels: { job: string }; health: string; lastError: string }> };
      };
      const refused = body.data.activeTargets.find((x) => x.labels.job === 'refused');
      return refused && refused.health !== 'unknown' ? body.data.activeTargets : undefined;
    });
    const byJob = Object.fromEntries(targets.map((x) => [x.labels.job, x]));
    expect(byJob.logscope).toMatchObject({ health: 'up', lastError: '' });
    expect(byJob.refused?.health).toBe('down');
    expect(byJob.refused?.lastError).toContain('403');
  });
});
