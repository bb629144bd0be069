import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../../src/core/event.js';
import { FIRST_WINDOW_EVENTS, firstWindow, nearest } from '../../../src/features/events/event-context.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

/**
 * The windows `nearest` reads for a source logging at the given times, and what it
 * returns: a fake store answering each window with the source's events in it, nearest
 * first, at most `n` (as a side's search does).
 */
async function reads(times: number[], side: 'before' | 'after', at: number, n: number, first?: number) {
  const span = { oldest: 0, newest: 24 * HOUR };
  const windows: Array<{ oldest: number; newest: number }> = [];
  const found = await nearest(
    async (w) => {
      windows.push(w);
      const inside = times
        .filter((t) => t >= w.oldest && t <= w.newest && (side === 'before' ? t < at : t > at))
        .sort((a, b) => (side === 'before' ? b - a : a - b))
        .slice(0, n);
      return { events: inside.map((ts) => ({ ts }) as StoredEvent) };
    },
    side,
    at,
    span,
    n,
    first,
  );
  return { windows, found: found.map((e) => e.ts) };
}

describe('nearest: the windows one side of a context reads', () => {
  const at = 12 * HOUR;

  it('reads ten minutes for a busy source, once', async () => {
    const busy = Array.from({ length: 24 * 60 * 6 }, (_, i) => i * 10_000); // every 10 s
    const { windows, found } = await reads(busy, 'before', at, 51);
    expect(windows).toEqual([{ oldest: at - 10 * MIN, newest: 24 * HOUR }]);
    expect(found).toHaveLength(51);
    expect(found[0]).toBe(at - 10_000);
  });

  it('reads the whole store after an empty window (a source that logs once an hour)', async () => {
    const hourly = Array.from({ length: 24 }, (_, i) => i * HOUR + 30 * MIN);
    const { windows, found } = await reads(hourly, 'after', at, 51);
    expect(windows).toEqual([
      { oldest: 0, newest: at + 10 * MIN },
      { oldest: 0, newest: 24 * HOUR },
    ]);
    expect(found).toEqual(hourly.filter((t) => t > at));
  });

  it('sizes the next window from what the last held', async () => {
    const everyMinute = Array.from({ length: 24 * 60 }, (_, i) => i * MIN + 1);
    const { windows, found } = await reads(everyMinute, 'before', at, 51);
    // 10 of 51 in ten minutes: next about 10 min · 51 · 1.5 / 10 = 76.5 min.
    expect(windows.map((w) => at - w.oldest)).toEqual([10 * MIN, Math.ceil((10 * MIN * 51 * 1.5) / 10)]);
    expect(found).toHaveLength(51);
  });
});

describe('firstWindow: ten minutes, widened on a store of few events an hour', () => {
  const span = { oldest: 0, newest: 24 * HOUR };
  const at = 12 * HOUR;
  /** A store of `perDay` events spread evenly over the day (the per-hour estimate's view). */
  const even = (perDay: number) => (from: number, to: number) => ((to - from) / (24 * HOUR)) * perDay;

  it('keeps ten minutes where they hold enough events, and doubles them until they do', () => {
    expect(firstWindow(even(100_000_000), 'before', at, span)).toBe(10 * MIN);
    expect(firstWindow(even(10_000_000), 'after', at, span)).toBe(20 * MIN);
    const w = firstWindow(even(1_000_000), 'before', at, span);
    expect(w).toBe(160 * MIN);
    expect(even(1_000_000)(at - w, at)).toBeGreaterThanOrEqual(FIRST_WINDOW_EVENTS);
    expect(even(1_000_000)(at - w / 2, at)).toBeLessThan(FIRST_WINDOW_EVENTS);
  });

  it('stops once the window covers the store (an empty or small one)', () => {
    expect(at - firstWindow(() => 0, 'before', at, span)).toBeLessThanOrEqual(span.oldest);
    expect(at + firstWindow(() => 0, 'after', at, span)).toBeGreaterThanOrEqual(span.newest);
  });

  it('saves a source logging 1,000 events a day in a store of 1 M its second read', async () => {
    const source = Array.from({ length: 1000 }, (_, i) => Math.floor((i * 24 * HOUR) / 1000) + 7);
    const first = firstWindow(even(1_000_000), 'before', at, span);
    const widened = await reads(source, 'before', at, 51, first);
    expect(widened.windows).toHaveLength(1);
    expect(widened.found).toHaveLength(51);
    // Ten minutes first: two reads, the same events.
    const fixed = await reads(source, 'before', at, 51);
    expect(fixed.windows).toHaveLength(2);
    expect(fixed.found).toEqual(widened.found);
  });
});
