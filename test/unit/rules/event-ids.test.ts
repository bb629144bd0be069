import { decodeTime, isValid } from 'ulidx';
import { describe, expect, it } from 'vitest';
import { newEventId, newUlid } from '../../../src/core/ids.js';

describe('event ids', () => {
  it('are ULIDs of their time, unique, ascending within a millisecond and across them', () => {
    const t = Date.UTC(2026, 10, 25, 9, 30);
    const ids = Array.from({ length: 20_000 }, (_, i) => newEventId(t + Math.floor(i / 1000)));
    for (const id of ids.slice(0, 50)) expect(isValid(id), id).toBe(true);
    expect(decodeTime(ids[0] as string)).toBe(t);
    expect(decodeTime(ids[19_999] as string)).toBe(t + 19);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    // Each id holds its own time, however times follow each other (the time part is reused).
    const times = [t, t + 1, t, t - 86_400_000, t + 5, t + 5];
    expect(times.map((ms) => decodeTime(newEventId(ms)))).toEqual(times);
  });

  it("share this process's random half, so neighbours differ only in their last characters", () => {
    const [a, b] = [newEventId(1_000), newEventId(1_000)] as [string, string];
    expect(a.slice(0, 18)).toBe(b.slice(0, 18));
    expect(a).not.toBe(b);
    // Query ids stay random per millisecond. newUlid is monotonic: an earlier time than one it
    // was given before (by another test in this process) would only count up from that one.
    const later = Date.now() + 1e12;
    expect(newUlid(later).slice(10, 18)).not.toBe(newUlid(later + 1000).slice(10, 18));
  });
});
