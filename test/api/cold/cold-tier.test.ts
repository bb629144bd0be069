import { existsSync, renameSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalisedEvent } from '../../../src/core/event.js';
import type { ColdFileRecord } from '../../../src/event-store/event-store.js';
import { StreamRetention } from '../../../src/features/streams/retention.js';
import { StreamsRepository } from '../../../src/features/streams/streams-repository.js';
import { createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { event } from '../../helpers/seed.js';

// The cold tier through the API (docs/operations/cold-tier.md): streams' hot_days decide
// what a round moves and where each event is filed; every query type, an event by id and
// its context answer as before the move, for an administrator and for a user who reads
// one stream; the files are listed to administrators only, and counted in /metrics.

const DAY = 86_400_000;
const now = Date.now();
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe.skipIf(EVENT_STORE !== 'duckdb')('the cold tier, through the API', () => {
  let t: TestApp;
  let eve: { id: number; token: string };
  let nginxId: number;
  let cronId: number;
  const sent: NormalisedEvent[] = [];
  const range = { ts_from: Math.floor((now - 30 * DAY) / 1000), ts_to: Math.ceil(now / 1000) + 60 };
  const post = (token: string, url: string, payload: object) => t.as(token, { method: 'POST', url, payload });
  const query = async (token: string, type: string, params: Record<string, unknown>) => {
    const res = await post(token, '/api/query', { type, params: { time_range: range, ...params } });
    expect(res.statusCode, res.body).toBe(200);
    const q = res.json();
    expect(q.status, q.error).toBe('SUCCESS');
    return q.results as unknown;
  };
  const QUERIES: Array<[string, Record<string, unknown>]> = [
    ['Search', { query: '', page_size: 500 }],
    ['Search', { query: 'status:500', sort: ['host', '-ts'], page_size: 7, page: 2 }],
    ['TopN', { field: 'host', n: 3 }],
    ['LastN', { field: 'app', n: 5 }],
    [
      'Summary',
      {
        group_by: ['app'],
        metrics: [{ op: 'count' }, { op: 'count_distinct', field: 'host' }, { op: 'p50', field: 'bytes' }],
      },
    ],
    ['Timeline', { interval: '1d' }],
    ['Patterns', { n: 5 }],
    ['Table', { query: '* | stats count() as n by app | sort app' }],
  ];
  const answers = async (token: string) => {
    const out: unknown[] = [];
    for (const [type, params] of QUERIES) out.push(await query(token, type, params));
    return JSON.parse(JSON.stringify(out, (k, v) => (k === 'took_ms' ? undefined : v)));
  };
  let adminBefore: unknown;
  let eveBefore: unknown;

  beforeAll(async () => {
    t = await createTestApp();
    eve = await t.user('eve');
    const team = (await post(t.adminToken, '/api/teams', { name: 'web', members: [eve.id] })).json().id;
    const nginx = await post(t.adminToken, '/api/streams', {
      title: 'Nginx',
      rule: 'app:nginx',
      readers: { teams: [team] },
      hot_days: 5,
    });
    expect(nginx.statusCode, nginx.body).toBe(201);
    nginxId = nginx.json().id;
    // Cron's events: the administrators' only (no longer Default's, which everyone reads).
    const cron = await post(t.adminToken, '/api/streams', { title: 'Cron', rule: 'app:cron', hot_days: 3 });
    expect(cron.statusCode, cron.body).toBe(201);
    cronId = cron.json().id;
    const streams = (await t.as(t.adminToken, { method: 'GET', url: '/api/streams' })).json()
      .results as Array<{ id: number; builtin: boolean }>;
    const defaultId = streams.find((s) => s.builtin)?.id;
    const d = await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/streams/${defaultId}`,
      payload: { hot_days: 2 },
    });
    expect(d.statusCode, d.body).toBe(200);
    for (let i = 0; i < 600; i++) {
      // Half an hour off every cut: the round the server runs itself soon after start
      // (a few seconds after \`now\`) moves the same events.
      const ts = now - ((i * 37) % 20) * DAY - (i % 13) * 3_600_000 - 1_800_000;
      sent.push(
        event({
          ts,
          app: ['nginx', 'cron', 'db'][i % 3] as string,
          host: `h${i % 4}`,
          message: `job ${i % 7} finished in ${i % 50} ms`,
          status: i % 5 === 0 ? 500 : 200,
          bytes: i * 3,
        }),
      );
    }
    await t.rt.events.append(sent);
    adminBefore = await answers(t.adminToken);
    eveBefore = await answers(eve.token);
  }, 60_000);
  afterAll(() => t?.close());

  it('moves what every stream of an event lets go, filed under its home stream by day', async () => {
    const round = await t.rt.services.coldMoves.run(now);
    expect(round.errors).toEqual([]);
    const hotDays = (app: string | null) => (app === 'nginx' ? 5 : app === 'cron' ? 3 : 2);
    const moved = sent.filter((e) => e.ts < now - hotDays(e.app) * DAY);
    expect(round.events).toBe(moved.length);
    const res = await t.as(t.adminToken, { method: 'GET', url: '/api/cold/files?page_size=500' });
    expect(res.statusCode, res.body).toBe(200);
    const files = res.json().results as Array<{
      stream_id: number;
      day: string;
      rows: number;
      path: string;
      bytes: number;
      min_ts: number;
    }>;
    expect(files.reduce((s, f) => s + f.rows, 0)).toBe(moved.length);
    const home = (app: string | null) => (app === 'nginx' ? nginxId : app === 'cron' ? cronId : 'default');
    const expected = new Set(moved.map((e) => `${home(e.app)} ${day(e.ts)}`));
    expect(files.length).toBe(expected.size);
    // Oldest day first; each file where its record says, under the data dir's cold folder.
    expect(files.map((f) => f.day)).toEqual([...files.map((f) => f.day)].sort());
    for (const f of files) expect(existsSync(path.join(t.dataDir, 'cold', ...f.path.split('/')))).toBe(true);
    const byStream = await t.as(t.adminToken, {
      method: 'GET',
      url: `/api/cold/files?stream_id=${nginxId}&page_size=500`,
    });
    expect((byStream.json().results as typeof files).every((f) => f.stream_id === nginxId)).toBe(true);
  });

  it('gives each stream its events and bytes per tier, as of the last round', async () => {
    await t.rt.services.streamTiers.refresh();
    const files = await t.rt.events.coldFiles();
    const res = await t.as(eve.token, { method: 'GET', url: `/api/streams/${nginxId}` });
    expect(res.statusCode, res.body).toBe(200);
    const { tiers } = res.json();
    const own = files.filter((f) => f.streamId === nginxId);
    const nginx = sent.filter((e) => e.app === 'nginx');
    expect(tiers.cold).toEqual({
      events: own.reduce((n, f) => n + f.rows, 0),
      bytes: own.reduce((n, f) => n + f.bytes, 0),
      files: own.length,
      oldest_ts: Math.floor(Math.min(...own.map((f) => f.minTs)) / 1000),
      newest_ts: Math.floor(Math.max(...own.map((f) => f.maxTs)) / 1000),
    });
    expect(tiers.cold.events + tiers.hot.events).toBe(nginx.length);
    expect(tiers.hot.events).toBe(nginx.filter((e) => e.ts >= now - 5 * DAY).length);
    expect(tiers.hot.bytes).toBeGreaterThan(0);
    expect(Date.parse(tiers.as_of)).toBeGreaterThan(now - 60_000);
    // With counts, each stream the caller reads; Cron's figures are not eve's to see.
    const list = await t.as(eve.token, { method: 'GET', url: '/api/streams?counts=true' });
    const streams = list.json().results as Array<{ id: number; tiers?: unknown }>;
    expect(streams.find((s) => s.id === nginxId)?.tiers).toEqual(tiers);
    const cron = await t.as(t.adminToken, { method: 'GET', url: `/api/streams/${cronId}` });
    expect(cron.json().tiers.cold.events + cron.json().tiers.hot.events).toBe(
      sent.filter((e) => e.app === 'cron').length,
    );
  });

  it('answers every query as before the move, for an administrator and for a reader of one stream', async () => {
    expect(await answers(t.adminToken)).toEqual(adminBefore);
    expect(await answers(eve.token)).toEqual(eveBefore);
  });

  it('says which cold files a query reads: those its summary admits of those its range meets', async () => {
    const files = await t.rt.events.coldFiles();
    const run = async (query: string, time_range: object) => {
      const res = await post(t.adminToken, '/api/query', { type: 'Search', params: { time_range, query } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().cold as {
        files: number;
        files_skipped: number;
        files_read: number;
        bytes_read: number;
      } | null;
    };
    const all = await run('', range);
    expect(all).toEqual({
      files: files.length,
      files_skipped: 0,
      files_read: files.length,
      bytes_read: files.reduce((n, f) => n + f.bytes, 0),
    });
    // A word no event has: every file skipped by its summary.
    expect(await run('zzqxjv', range)).toMatchObject({
      files: files.length,
      files_skipped: files.length,
      files_read: 0,
    });
    // The last hour meets no cold file.
    expect(await run('', { preset: 'last_hour' })).toBeNull();
  });

  it('reads a moved event by id and its context; another stream’s moved event is 404 to a reader of one', async () => {
    const old = sent.filter((e) => e.ts < now - 6 * DAY);
    const nginxOld = old.find((e) => e.app === 'nginx') as NormalisedEvent;
    const cronOld = old.find((e) => e.app === 'cron') as NormalisedEvent;
    const one = await t.as(eve.token, { method: 'GET', url: `/api/events/${nginxOld.ev_id}` });
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json().message).toBe(nginxOld.message);
    expect((await t.as(eve.token, { method: 'GET', url: `/api/events/${cronOld.ev_id}` })).statusCode).toBe(
      404,
    );
    expect(
      (await t.as(t.adminToken, { method: 'GET', url: `/api/events/${cronOld.ev_id}` })).statusCode,
    ).toBe(200);
    const ctx = await t.as(t.adminToken, {
      method: 'GET',
      url: `/api/events/${nginxOld.ev_id}/context?before=3&after=3&by=`,
    });
    expect(ctx.statusCode, ctx.body).toBe(200);
    const around = [...sent].sort((a, b) => a.ts - b.ts || a.ev_id.localeCompare(b.ev_id));
    const at = around.findIndex((e) => e.ev_id === nginxOld.ev_id);
    const body = ctx.json() as { before: Array<{ ev_id: string }>; after: Array<{ ev_id: string }> };
    expect(body.after.map((e) => e.ev_id)).toEqual(around.slice(at + 1, at + 4).map((e) => e.ev_id));
  });

  it('lists files to administrators only, and counts them in /metrics', async () => {
    expect((await t.as(eve.token, { method: 'GET', url: '/api/cold/files' })).statusCode).toBe(403);
    expect((await t.as(null, { method: 'GET', url: '/api/cold/files' })).statusCode).toBe(401);
    expect(
      (await t.as(t.adminToken, { method: 'GET', url: '/api/cold/files?day=yesterday' })).statusCode,
    ).toBe(400);
    const metrics = await t.as(t.adminToken, { method: 'GET', url: '/metrics' });
    const files = (await t.rt.events.coldFiles()).length;
    expect(metrics.body).toContain(`logscope_cold_files ${files}`);
    expect(metrics.body).toMatch(/logscope_tier_events\{tier="cold"\} [1-9]/);
  });

  it('answers health 503 naming cold while a recorded file cannot be read', async () => {
    const [f] = await t.rt.events.coldFiles();
    if (!f) throw new Error('no file');
    const file = path.join(t.dataDir, 'cold', ...f.path.split('/'));
    expect((await t.app.inject({ method: 'GET', url: '/api/health' })).json().dependencies.cold).toEqual({
      kind: 'directory',
      status: 'ok',
    });
    renameSync(file, `${file}.away`);
    try {
      const down = await t.app.inject({ method: 'GET', url: '/api/health' });
      expect(down.statusCode).toBe(503);
      expect(down.json().failing).toEqual(['cold']);
    } finally {
      renameSync(`${file}.away`, file);
    }
    expect((await t.app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
  });

  it('counts both tiers for retentionMaxBytes: the oldest cold files go first, whole', async () => {
    const files = [...(await t.rt.events.coldFiles())].sort((a, b) => a.minTs - b.minTs || a.id - b.id);
    const stats = await t.rt.events.stats();
    const [first, second] = files as [ColdFileRecord, ColdFileRecord];
    // One byte over with the oldest file gone: the two oldest go.
    const max = stats.dataBytes + files.reduce((n, f) => n + f.bytes, 0) - first.bytes - 1;
    const retention = new StreamRetention(t.rt.events, new StreamsRepository(t.rt.meta.db), {
      retentionDays: 0,
      retentionMaxBytes: max,
    });
    const count = async () =>
      ((await query(t.adminToken, 'Search', { query: '', page_size: 1 })) as { total: number }).total;
    const before = await count();
    const run = await retention.run();
    expect(run.max_bytes).toBe(first.rows + second.rows);
    expect((await t.rt.events.coldFiles()).map((f) => f.id)).toEqual(files.slice(2).map((f) => f.id));
    expect(await count()).toBe(before - first.rows - second.rows);
  });
});
