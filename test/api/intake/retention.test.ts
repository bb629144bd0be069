import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamRetention } from '../../../src/features/streams/retention.js';
import { StreamsRepository } from '../../../src/features/streams/streams-repository.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { storedEvents } from '../../helpers/events.js';
import { event } from '../../helpers/seed.js';

describe('retention', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('deletes events older than the cut-off and keeps the slice estimate current', async () => {
    const now = Date.now();
    const old = Array.from({ length: 50 }, (_, i) =>
      event({ ts: now - 10 * 86_400_000 - i * 1000, message: 'old' }),
    );
    const fresh = Array.from({ length: 30 }, (_, i) => event({ ts: now - i * 1000, message: 'fresh' }));
    await t.rt.events.append([...old, ...fresh]);
    expect(t.rt.events.estimateInRange(now - 11 * 86_400_000, now + 3_600_000)).toBe(80);
    const deleted = await t.rt.events.deleteOlderThan(now - 7 * 86_400_000);
    expect(deleted).toBe(50);
    expect(await storedEvents(t, (e) => e.message === 'old')).toHaveLength(0);
    expect(await storedEvents(t, (e) => e.message === 'fresh')).toHaveLength(30);
    expect(t.rt.events.estimateInRange(now - 11 * 86_400_000, now + 3_600_000)).toBe(30);
  });
});

describe('retention per stream', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_RETENTION_DAYS: '30' });
  });
  afterAll(() => t.close());

  const stream = async (title: string, rule: string, retention_days: number | null) => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/streams',
      payload: { title, rule, retention_days },
    });
    expect(res.statusCode, res.body).toBe(201);
  };

  it('keeps each event as long as the longest retention of its streams; Default follows retentionDays', async () => {
    const now = Date.now();
    const DAY = 86_400_000;
    await stream('Short', 'app:short', 1);
    // Long also takes events marked keep:yes, whatever their app.
    await stream('Long', 'app:long OR keep:yes', 365);
    await stream('Forever', 'app:audit', 0);
    const at = (app: string, days: number, extra: Record<string, string> = {}) =>
      event({ ts: now - days * DAY, app, message: `${app} ${days}d`, fields: extra });
    await t.rt.events.append([
      at('short', 2), // Short only: past 1 day
      at('short', 0.5),
      at('short', 2, { keep: 'yes' }), // Short and Long: Long keeps it
      at('long', 100),
      at('long', 400), // past 365 days
      at('web', 40), // Default: past retentionDays (30)
      at('web', 10),
      at('audit', 4000), // forever
    ]);
    const run = await t.rt.services.retention.run(now);
    expect(run).toEqual({ retention: 3, max_bytes: 0 });
    const left = (await storedEvents(t, () => true)).map((e) => e.message).sort();
    expect(left).toEqual(['audit 4000d', 'long 100d', 'short 0.5d', 'short 2d', 'web 10d']);
    // Nothing more to delete: a second run deletes nothing.
    expect(await t.rt.services.retention.run(now)).toEqual({ retention: 0, max_bytes: 0 });
    const metrics = await t.as(t.adminToken, { method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/logscope_events_deleted_total\{reason="retention"\} 3/);
  });

  it('a rule changed later applies to what is stored: retention follows the streams as they are now', async () => {
    const now = Date.now();
    await t.rt.events.append([event({ ts: now - 20 * 86_400_000, app: 'batch', message: 'batch 20d' })]);
    // Default keeps 30 days: the event stays; a Batch stream of 7 days lets it go.
    expect((await t.rt.services.retention.run(now)).retention).toBe(0);
    await stream('Batch', 'app:batch', 7);
    expect((await t.rt.services.retention.run(now)).retention).toBe(1);
    expect(await storedEvents(t, (e) => e.message === 'batch 20d')).toHaveLength(0);
  });
});

describe('retentionMaxBytes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('deletes the oldest events, as many as the excess holds; a store within the limit is left alone', async () => {
    const now = Date.now();
    await t.rt.events.append(
      Array.from({ length: 200 }, (_, i) => event({ ts: now - (200 - i) * 60_000, message: `m${i}` })),
    );
    const { dataBytes } = await t.rt.events.stats();
    const repo = new StreamsRepository(t.rt.meta.db);
    const roomy = new StreamRetention(t.rt.events, repo, { retentionDays: 0, retentionMaxBytes: dataBytes });
    expect(await roomy.run(now)).toEqual({ retention: 0, max_bytes: 0 });
    const half = new StreamRetention(t.rt.events, repo, {
      retentionDays: 0,
      retentionMaxBytes: Math.floor(dataBytes / 2),
    });
    const run = await half.run(now);
    expect(run.retention).toBe(0);
    // About half (whole seconds go together, and the store's size is its own estimate).
    expect(run.max_bytes).toBeGreaterThanOrEqual(90);
    expect(run.max_bytes).toBeLessThanOrEqual(110);
    const left = await storedEvents(t, () => true);
    expect(left.length).toBe(200 - run.max_bytes);
    // What is left is the newest: every deleted event is older than every kept one.
    const kept = new Set(left.map((e) => e.message));
    const oldestKept = Math.min(...left.map((e) => e.ts));
    for (let i = 0; i < 200; i++)
      if (!kept.has(`m${i}`)) expect(now - (200 - i) * 60_000).toBeLessThan(oldestKept);
  });
});
