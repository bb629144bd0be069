import { describe, expect, it } from 'vitest';
import {
  Cutter,
  fitToCap,
  iso,
  jsonBytes,
  MAX_ANSWER_BYTES,
  shapeEvent,
} from '../../../src/features/mcp/mcp-shaping.js';

describe('MCP answer shaping', () => {
  it('writes Unix seconds as ISO 8601 UTC with milliseconds, anything else as it is', () => {
    expect(iso(1_795_750_398.782)).toBe('2026-11-27T03:33:18.782Z');
    expect(iso(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(iso(null)).toBeNull();
    expect(iso('x')).toBe('x');
  });

  it('cuts strings at 2,000 characters, never inside a surrogate pair, and says so', () => {
    const cutter = new Cutter();
    expect(cutter.text('a'.repeat(2000))).toHaveLength(2000);
    expect(cutter.cut).toBe(false);
    const emoji = `${'a'.repeat(1999)}😀tail`;
    const cut = cutter.text(emoji);
    expect(cut).toBe('a'.repeat(1999));
    expect(cutter.cut).toBe(true);
    expect(new Cutter().deep({ a: ['b'.repeat(2500)], n: 3 })).toEqual({ a: ['b'.repeat(2000)], n: 3 });
  });

  it('leaves raw and null values out of an event, times as ISO, names an event with a cut value', () => {
    const cutEvents: string[] = [];
    const fields = JSON.parse(
      '{"__proto__": "kept", "ev_id": "e1", "ts": 1, "stored_at": 2, "raw": "{}", "user": null, "message": "m"}',
    );
    const shaped = shapeEvent(fields, cutEvents);
    expect(Object.keys(shaped)).toEqual(['__proto__', 'ev_id', 'ts', 'stored_at', 'message']);
    expect(Object.getPrototypeOf(shaped)).toBe(Object.prototype);
    expect(shaped.ts).toBe('1970-01-01T00:00:01.000Z');
    expect(cutEvents).toEqual([]);
    shapeEvent({ ev_id: 'e2', message: 'x'.repeat(3000), detail: { deep: 'y'.repeat(3000) } }, cutEvents);
    expect(cutEvents).toEqual(['e2']);
  });

  it('leaves whole items out until the answer fits, the ones `next` names first', () => {
    const items = Array.from({ length: 100 }, (_, i) => ({ i, pad: 'p'.repeat(5000) }));
    const fit = fitToCap(items, (kept, dropped) => ({ items: kept, n: kept.length, dropped }));
    expect(fit.dropped).toBe(true);
    expect(jsonBytes(fit.answer)).toBeLessThanOrEqual(MAX_ANSWER_BYTES);
    const kept = fit.answer.items as Array<{ i: number }>;
    expect(kept.map((x) => x.i)).toEqual(Array.from({ length: kept.length }, (_, i) => i));
    // One more item would not have fitted.
    expect(
      jsonBytes({ items: items.slice(0, kept.length + 1), n: kept.length + 1, dropped: true }),
    ).toBeGreaterThan(MAX_ANSWER_BYTES);
    const fromFront = fitToCap(
      items,
      (k) => ({ items: k }),
      () => 0,
    );
    expect((fromFront.answer.items as Array<{ i: number }>)[0]?.i).toBeGreaterThan(0);
    const small = fitToCap(items.slice(0, 3), (k, dropped) => ({ items: k, dropped }));
    expect(small).toEqual({ answer: { items: items.slice(0, 3), dropped: false }, dropped: false });
  });
});
