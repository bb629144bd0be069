import { describe, expect, it } from 'vitest';
import { HourHistogram } from '../../src/event-store/hour-histogram.js';

const H = 3_600_000;
const T0 = Date.UTC(2026, 10, 23, 10);

describe('the hour histogram behind query slices', () => {
  it('counts appended events by the hour of their time', () => {
    const h = new HourHistogram();
    h.add([{ ts: T0 + 1 }, { ts: T0 + H - 1 }, { ts: T0 + H }]);
    expect(h.estimate(T0, T0 + H)).toBe(2);
    expect(h.estimate(T0, T0 + 2 * H)).toBe(3);
    expect(h.estimate(T0, T0 + H / 2)).toBe(1);
  });

  it("spreads another node's commit over the hours its time bounds cover", () => {
    const h = new HourHistogram();
    // 300 events from 10:30 to 12:30: a quarter, a half and a quarter of the span.
    h.addSpread(300, T0 + H / 2, T0 + 2.5 * H - 1);
    expect(h.estimate(T0, T0 + H)).toBe(75);
    expect(h.estimate(T0 + H, T0 + 2 * H)).toBe(150);
    expect(h.estimate(T0 + 2 * H, T0 + 3 * H)).toBe(75);
    expect(h.estimate(T0 - H, T0 + 4 * H)).toBe(300);
  });

  it('ignores empty or reversed bounds and counts a backfill of months at its end', () => {
    const h = new HourHistogram();
    h.addSpread(0, T0, T0 + H);
    h.addSpread(5, T0 + H, T0);
    h.addSpread(5, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY);
    expect(h.entries()).toEqual([]);
    h.addSpread(10, T0 - 400 * 24 * H, T0 + 10);
    expect(h.estimate(T0, T0 + H)).toBe(10);
  });

  it('cuts all time into parts of whole hours holding at most so many events', () => {
    const h = new HourHistogram();
    h.reset([
      [T0 + 2 * H, 40],
      [T0, 30],
      [T0 + H, 50],
      [T0 + 3 * H, 200],
      [T0 + 4 * H, 10],
    ]);
    expect(h.parts(100)).toEqual([
      { fromMs: Number.NEGATIVE_INFINITY, toMs: T0 + 2 * H },
      { fromMs: T0 + 2 * H, toMs: T0 + 3 * H },
      { fromMs: T0 + 3 * H, toMs: T0 + 4 * H },
      { fromMs: T0 + 4 * H, toMs: Number.POSITIVE_INFINITY },
    ]);
    expect(new HourHistogram().parts(100)).toEqual([
      { fromMs: Number.NEGATIVE_INFINITY, toMs: Number.POSITIVE_INFINITY },
    ]);
  });
});
