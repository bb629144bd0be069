import { statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';

// Events as shippers send them, at the edges of what they send: requests of one event, one
// request of 50,000 in reverse time order, and a burst of 10,000 one-event requests from
// many connections at once, each through a listening server as a shipper sends it (a 503
// waits its Retry-After, shortened here, and is sent again). Every event is stored once
// and found: the counts, a word of one event in each shape and the newest-first order.

const HOUR = 3_600_000;

interface Line {
  timestamp: string;
  app: string;
  host: string;
  message: string;
}

/** One NDJSON request, sent again after each 503 until it is taken; the number of 503s. */
async function post(url: string, token: string, lines: readonly Line[]): Promise<number> {
  const body = `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
  for (let refused = 0; ; refused++) {
    const res = await fetch(`${url}/api/ingest`, {
      method: 'POST',
      headers: { authorization: `token ${token}`, 'content-type': 'application/x-ndjson' },
      body,
    });
    const answer = (await res.json()) as { accepted?: number; rejected?: number };
    if (res.status === 200) {
      expect(answer).toMatchObject({ accepted: lines.length, rejected: 0 });
      return refused;
    }
    // Full queue: the only refusal a shipper's batch of good events may get.
    expect(res.status, JSON.stringify(answer)).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs `jobs` with at most `width` at a time. */
async function pool<T>(width: number, jobs: ReadonlyArray<() => Promise<T>>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  const lane = async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await (jobs[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
  return out;
}

describe(`events in shippers' edge shapes on ${BACKEND} and ${EVENT_STORE}`, () => {
  let t: TestApp;
  let url: string;
  let token: string;
  const t0 = Date.now() - 2 * HOUR;
  const window = { ts_from: Math.floor(t0 / 1000) - 3600, ts_to: Math.floor(Date.now() / 1000) + 60 };
  /** A line of the shape `app` (each test's own), from one of a few hosts. */
  const line = (ms: number, app: string, host: string, message: string): Line => ({
    timestamp: new Date(ms).toISOString(),
    app,
    host,
    message,
  });

  beforeAll(async () => {
    t = await createTestApp();
    token = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'shipper' })).secret_key;
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  // Closing commits what a burst left queued: on a loaded machine, more than the default 30 s.
  afterAll(() => t?.close(), 120_000);

  const query = async (type: string, params: Record<string, unknown>) => {
    const res = await fetch(`${url}/api/query`, {
      method: 'POST',
      headers: { authorization: `token ${t.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type, params: { time_range: window, ...params } }),
    });
    const json = (await res.json()) as { status: string; results: Record<string, unknown> };
    expect(res.status, JSON.stringify(json).slice(0, 300)).toBe(200);
    return json.results;
  };
  const count = async (q: string) => (await query('Search', { query: q, page_size: 1 })).total;

  it('stores 300 requests of one event each, 8 at a time, out of order between them', async () => {
    const jobs = Array.from({ length: 300 }, (_, i) => {
      // Every third request is late by up to an hour.
      const ms = t0 + i * 1000 - (i % 3 === 0 ? (i * 7919) % HOUR : 0);
      const word = i === 150 ? ' tantalite' : '';
      return () => post(url, token, [line(ms, 'single', `h${i % 5}`, `single event ${i}${word}`)]);
    });
    await pool(8, jobs);
    expect(await count('app:single')).toBe(300);
    expect(await count('tantalite')).toBe(1);
    expect(await count('message:"single event 299"')).toBe(1);
  });

  it('stores one request of 50,000 events in reverse time order, and reads them newest first', async () => {
    const n = 50_000;
    const base = t0 + 30 * 60_000;
    // The newest first: each line 50 ms before the one above it.
    const lines = Array.from({ length: n }, (_, i) =>
      line(
        base + (n - i) * 50,
        'reverse',
        `h${i % 11}`,
        `reverse order line ${i} of ${n} took ${(i * 37) % 1000} ms${i === 31_337 ? ' columbite' : ''}`,
      ),
    );
    await post(url, token, lines);
    expect(await count('app:reverse')).toBe(n);
    expect(await count('columbite')).toBe(1);
    const page = (await query('Search', { query: 'app:reverse', page_size: 3 })).events as Array<{
      message: string;
    }>;
    expect(page.map((e) => e.message.split(' took')[0])).toEqual([
      'reverse order line 0 of 50000',
      'reverse order line 1 of 50000',
      'reverse order line 2 of 50000',
    ]);
  }, 60_000);

  it('takes a burst of 10,000 one-event requests from 64 connections, losing none, while health answers', async () => {
    const n = 10_000;
    const base = t0 + HOUR;
    const healthMs: number[] = [];
    let burst = true;
    // Health, asked every 100 ms through the burst: it answers, and soon.
    const health = (async () => {
      while (burst) {
        const began = performance.now();
        const res = await fetch(`${url}/api/health`);
        expect(res.status).toBe(200);
        healthMs.push(performance.now() - began);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const jobs = Array.from({ length: n }, (_, i) => {
      const word = i === 7_777 ? ' wolframite' : '';
      return () =>
        post(url, token, [line(base + i * 10, 'burst', `h${i % 13}`, `burst request ${i}${word}`)]);
    });
    await pool(64, jobs);
    burst = false;
    await health;
    expect(await count('app:burst')).toBe(n);
    expect(await count('wolframite')).toBe(1);
    expect(await count(`message:"burst request ${n - 1}"`)).toBe(1);
    expect(healthMs.length).toBeGreaterThan(0);
    expect(Math.max(...healthMs)).toBeLessThan(2_000);
    // Every shape's events, none twice.
    expect(await count('')).toBe(300 + 50_000 + n);
  }, 120_000);
});

describe.runIf(EVENT_STORE === 'duckdb')("the DuckDB store's write-ahead log during a load", () => {
  let t: TestApp;
  let url: string;
  let token: string;

  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_DUCKDB_CHECKPOINT_THRESHOLD: '4MB' });
    token = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'shipper' })).secret_key;
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  // Closing commits what a burst left queued: on a loaded machine, more than the default 30 s.
  afterAll(() => t?.close(), 120_000);

  it('stays within its checkpoint threshold and a commit while 60,000 events arrive in batches of 1,000 from 4 clients', async () => {
    const wal = path.join(t.dataDir, 'events.duckdb.wal');
    const sizes: number[] = [];
    let loading = true;
    const sampler = (async () => {
      while (loading) {
        // A checkpoint deletes the file: none is a WAL of 0.
        sizes.push(statSync(wal, { throwIfNoEntry: false })?.size ?? 0);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const start = Date.now() - HOUR;
    const jobs = Array.from({ length: 60 }, (_, b) => () => {
      const lines = Array.from({ length: 1000 }, (_, i) => {
        const k = b * 1000 + i;
        return {
          timestamp: new Date(start + k * 50 - (k % 50 === 0 ? 600_000 : 0)).toISOString(),
          app: 'wal',
          host: `h${k % 17}`,
          message: `GET /api/items/${(k * 7919) % 100_000} status ${200 + (k % 5)} in ${(k * 31) % 997} ms trace ${k.toString(16).padStart(12, '0')}`,
        };
      });
      return post(url, token, lines);
    });
    await pool(4, jobs);
    loading = false;
    await sampler;
    const mib = 1024 * 1024;
    const most = Math.max(...sizes);
    // With the default threshold (192MB) this load leaves ~13 MiB of WAL; with one of 4 MB it is
    // checkpointed again and again, so it never holds more than the threshold and the
    // commit that crossed it (the batcher's group of at most four requests: ~1.5 MiB).
    expect(sizes.length).toBeGreaterThan(20);
    expect(most).toBeGreaterThan(1 * mib);
    expect(most).toBeLessThan(4 * mib + 2 * mib);
    const drops = sizes.filter((s, i) => i > 0 && s < (sizes[i - 1] as number) / 2).length;
    expect(drops).toBeGreaterThanOrEqual(2);
    const res = await fetch(`${url}/api/query`, {
      method: 'POST',
      headers: { authorization: `token ${t.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        type: 'Search',
        params: { query: 'app:wal', page_size: 1, time_range: { preset: 'last_24_hours' } },
      }),
    });
    expect(((await res.json()) as { results: { total: number } }).results.total).toBe(60_000);
  }, 120_000);

  it("is left as it is by a round of the streams' tier figures (a checkpoint would hold every commit)", async () => {
    const wal = path.join(t.dataDir, 'events.duckdb.wal');
    const now = Date.now();
    await post(
      url,
      token,
      Array.from({ length: 500 }, (_, i) => ({
        timestamp: new Date(now - i * 1000).toISOString(),
        app: 'tiers',
        host: 'h1',
        message: `after the load ${i}`,
      })),
    );
    const before = statSync(wal).size;
    expect(before).toBeGreaterThan(0);
    await t.rt.services.streamTiers.refresh();
    expect(statSync(wal).size).toBe(before);
  });
});
