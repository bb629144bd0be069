import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { event } from '../../helpers/seed.js';

// A cold directory the mover cannot write into (a stream's folder taken by a file: what a
// read-only, full or unmounted volume does to a round): the round says why for each
// stream-day, counts it, leaves every event hot and every answer as it was, and moves
// them once the directory is writable again.

const DAY = 86_400_000;

describe.skipIf(EVENT_STORE !== 'duckdb')('a cold directory the mover cannot write into', () => {
  let t: TestApp;
  const now = Date.now();
  const sent = Array.from({ length: 200 }, (_, i) =>
    event({ ts: now - (3 + (i % 5)) * DAY - 1_800_000, app: 'batch', message: `run ${i} done` }),
  );
  const total = async () => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Search', params: { time_range: { preset: 'last_30_days' }, query: 'app:batch' } },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results.total as number;
  };

  beforeAll(async () => {
    t = await createTestApp();
    const streams = (await t.as(t.adminToken, { method: 'GET', url: '/api/streams' })).json()
      .results as Array<{
      id: number;
      builtin: boolean;
    }>;
    const defaultId = streams.find((s) => s.builtin)?.id as number;
    const d = await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/streams/${defaultId}`,
      payload: { hot_days: 1 },
    });
    expect(d.statusCode, d.body).toBe(200);
    // Default's folder is a file: nothing can be written under it.
    mkdirSync(path.join(t.dataDir, 'cold'), { recursive: true });
    writeFileSync(path.join(t.dataDir, 'cold', String(defaultId)), 'not a folder');
    await t.rt.events.append(sent);
  });
  afterAll(() => t?.close());

  it('leaves the events hot, says why, counts it, and moves them once it can', async () => {
    const round = await t.rt.services.coldMoves.run(now);
    expect(round.events).toBe(0);
    expect(round.errors.length).toBe(5);
    for (const e of round.errors) expect(e).toMatch(/^\d+\/\d{4}-\d{2}-\d{2}: /);
    expect(await t.rt.events.coldFiles()).toEqual([]);
    expect(await total()).toBe(sent.length);
    const metrics = await t.as(t.adminToken, { method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/logscope_cold_move_errors_total [1-9]/);
    const streams = (await t.as(t.adminToken, { method: 'GET', url: '/api/streams' })).json()
      .results as Array<{
      id: number;
      builtin: boolean;
    }>;
    rmSync(path.join(t.dataDir, 'cold', String(streams.find((s) => s.builtin)?.id)));
    const again = await t.rt.services.coldMoves.run(now);
    expect(again).toMatchObject({ events: sent.length, errors: [] });
    expect(await total()).toBe(sent.length);
  });
});
