import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { storedEvents } from '../helpers/events.js';
import { event } from '../helpers/seed.js';

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
