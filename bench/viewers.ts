import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { DuckDbEventStore } from '../src/event-store/duckdb/duckdb-event-store.js';
import { topnSql } from '../src/event-store/duckdb/duckdb-plans.js';
import { SYSTEM_SCOPE } from '../src/event-store/read-scope.js';
import { cond, or } from '../src/filter/ast.js';
import { type BenchServer, flag, fmt, scrapeMetrics, startServer } from './lib.js';

/**
 * Per-viewer live work (streams and access): V viewers of one dashboard widget in S
 * reader sets (each set a team reading its own stream). Viewers with the same readable
 * streams share one widget query; the goal is V viewers in S sets costing at most S× the
 * re-evaluations of one viewer while events arrive. Prints both runs' re-evaluations
 * (`logscope_query_evaluations_total`) and server CPU, and the raw engine running the
 * widget's SQL as many times as the server evaluated it.
 * Flags: --viewers 500, --sets 5, --seconds 15, --rate 100 (events/s).
 */
const CLK_TCK = 100;
const cpuTicks = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
};

async function call(server: BenchServer, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** Runs `fn` over `items`, `n` at a time. */
async function pool<T, R>(items: readonly T[], n: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i] as T);
      }
    }),
  );
  return out;
}

/** A viewer's websocket subscribed to the dashboard; resolves once its first update came. */
function subscribe(server: BenchServer, token: string, dashboardId: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws/live-updates?token=${token}`);
    ws.on('open', () => ws.send(JSON.stringify(['subscribe', { dashboard_id: dashboardId }])));
    ws.on('message', (data) => {
      const [cmd] = JSON.parse(String(data)) as [string];
      if (cmd === 'widget-update') resolve(ws);
      if (cmd === 'error') reject(new Error(String(data)));
    });
    ws.on('error', reject);
  });
}

export async function main(argv: string[]) {
  const viewers = flag(argv, 'viewers', 500);
  const sets = flag(argv, 'sets', 5);
  const seconds = flag(argv, 'seconds', 15);
  const rate = flag(argv, 'rate', 100);
  const server = await startServer({ LOGSCOPE_LIVE_REFRESH_MS: '1000' });
  const admin = server.token;
  try {
    // Reader sets: team k reads stream k (app:set-k); nobody but admins reads Default.
    const streams = (await call(server, admin, 'GET', '/api/streams')) as { results: Array<{ id: number }> };
    await call(server, admin, 'PATCH', `/api/streams/${streams.results[0]?.id}`, { readers: { teams: [] } });
    const teams: number[] = [];
    for (let k = 0; k < sets; k++) {
      const team = await call(server, admin, 'POST', '/api/teams', { name: `set-${k}` });
      teams.push(Number(team.id));
      await call(server, admin, 'POST', '/api/streams', {
        title: `set-${k}`,
        rule: `app:set-${k}`,
        readers: { teams: [team.id] },
      });
    }
    console.log(`creating ${fmt(viewers)} viewers in ${sets} reader sets…`);
    const users = await pool(
      Array.from({ length: viewers }, (_, i) => i),
      4,
      async (i) => {
        const username = `viewer-${i}`;
        const password = 'viewer-password-1';
        const u = await call(server, admin, 'POST', '/api/users', {
          username,
          password,
          permissions: ['manage_dashboards'],
        });
        const login = await call(server, admin, 'POST', '/api/auth/login', { username, password });
        return { id: Number(u.id), token: String(login.secret_key), set: i % sets };
      },
    );
    for (let k = 0; k < sets; k++)
      await call(server, admin, 'PATCH', `/api/teams/${teams[k]}`, {
        members: users.filter((u) => u.set === k).map((u) => u.id),
      });
    const dash = await call(server, admin, 'POST', '/api/dashboards', {
      title: 'Apps',
      widgets: [
        {
          title: 'Apps',
          query: { type: 'TopN', params: { time_range: { preset: 'last_hour' }, field: 'host' } },
        },
      ],
    });
    const dashboardId = Number(dash.id);

    /** Events at `rate` for `seconds`, spread over the sets; returns re-evaluations and CPU-s meanwhile. */
    const phase = async (label: string, watchers: typeof users) => {
      const sockets = await pool(watchers, 20, (u) => subscribe(server, u.token, dashboardId));
      await new Promise((r) => setTimeout(r, 1500));
      const before = (await scrapeMetrics(server)).get('logscope_query_evaluations_total') ?? 0;
      const cpu0 = cpuTicks(server.pid);
      const end = Date.now() + seconds * 1000;
      let sent = 0;
      while (Date.now() < end) {
        const batch = Array.from({ length: Math.ceil(rate / 10) }, (_, i) => ({
          app: `set-${(sent + i) % sets}`,
          host: `web-${(sent + i) % 7}`,
          message: `event ${sent + i}`,
        }));
        sent += batch.length;
        await call(server, admin, 'POST', '/api/ingest', batch);
        await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, 1500));
      const after = (await scrapeMetrics(server)).get('logscope_query_evaluations_total') ?? 0;
      const cpu = (cpuTicks(server.pid) - cpu0) / CLK_TCK;
      for (const ws of sockets) ws.close();
      await new Promise((r) => setTimeout(r, 500));
      console.log(`${label}: ${fmt(after - before)} evaluations, ${fmt(cpu, 1)} CPU-s, ${fmt(sent)} events`);
      return { evaluations: after - before, cpu };
    };
    const one = await phase('1 viewer', users.slice(0, 1));
    const all = await phase(`${fmt(viewers)} viewers in ${sets} sets`, users);
    await server.stop();

    // The raw engine: the widget's TopN (one set's scope), as many times as the server ran it.
    const store = await DuckDbEventStore.open({
      dataDir: server.dataDir,
      memoryLimit: '512MB',
      checkpointThreshold: '256MB',
    });
    const now = Date.now();
    const plan = {
      kind: 'topn' as const,
      scope: SYSTEM_SCOPE,
      filter: or(cond('app', 'eq', 'set-0')),
      range: { fromMs: now - 3_600_000, toMs: now },
      field: 'host',
      n: 10,
    };
    const q = topnSql(plan);
    const t0 = performance.now();
    const runs = Math.max(1, all.evaluations);
    for (let i = 0; i < runs; i++) await store.runSql(q.sql, q.params.values);
    const rawSeconds = (performance.now() - t0) / 1000;
    await store.close();

    console.log('');
    console.log(
      `per-viewer live work: ${fmt(viewers)} viewers of one widget in ${sets} reader sets, ${rate} events/s for ${seconds} s`,
    );
    console.log(
      `re-evaluations: 1 viewer ${fmt(one.evaluations)}, ${fmt(viewers)} viewers ${fmt(all.evaluations)}`,
    );
    console.log(
      `ratio ${fmt(all.evaluations / Math.max(1, one.evaluations), 2)}× (goal ≤ ${sets}×); server CPU ${fmt(one.cpu, 1)} → ${fmt(all.cpu, 1)} CPU-s`,
    );
    console.log(
      `raw engine: the widget's SQL ${fmt(runs)} times in ${fmt(rawSeconds, 2)} s; server CPU / raw: ${fmt(all.cpu / rawSeconds, 2)}×`,
    );
  } finally {
    await server.stop().catch(() => undefined);
  }
}
