/**
 * The search page's trigger preview against the alert engine itself: a history of matches
 * replayed by the preview gives the firings (times and counts) and the crossings held back
 * by the cooldown that the engine gives when the same matches arrive second by second, for
 * every operator, window and cooldown.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emptyEvent, type NormalisedEvent } from '../../../src/core/event.js';
import { AlertEngine, type AlertTrigger } from '../../../src/features/alerting/alert-engine.js';
import {
  type History,
  type Op,
  type PreviewCondition,
  previewThreshold,
  searchPart,
} from '../../../ui/src/pages/triggers/trigger-preview.js';

const FROM = 1_700_000_000;

/** What the engine notifies when `history`'s matches are committed in their seconds. */
function engineFirings(history: History, c: PreviewCondition) {
  const clock = { now: history.from * 1000 };
  const fired: { at: number; count: number }[] = [];
  const engine = new AlertEngine({
    now: () => clock.now,
    linkBase: () => 'http://logscope.test',
    onFiring: (f) => {
      if (f.notification.kind === 'fire')
        fired.push({ at: Math.floor(clock.now / 1000), count: f.notification.count ?? -1 });
    },
  });
  const trigger: AlertTrigger = {
    id: 1,
    name: 'preview',
    severity: 'medium',
    description: '',
    query: 'x',
    condition: {
      type: 'threshold',
      op: c.op,
      value: c.value,
      window_seconds: c.window_seconds,
      group_by: [],
    },
    notify: [1],
    cooldown_seconds: c.cooldown_seconds,
    create_task: false,
    version: 'v1',
    createdAtMs: clock.now,
  };
  engine.setTriggers([trigger]);
  const bySecond = new Map(history.counts.map(([s, n]) => [s, n]));
  let seq = 0;
  for (let s = history.from; s < history.to; s++) {
    clock.now = s * 1000;
    const n = bySecond.get(s) ?? 0;
    if (n > 0) {
      const events: NormalisedEvent[] = [];
      for (let i = 0; i < n; i++) {
        seq++;
        events.push(emptyEvent({ ev_id: `e${seq}`, ts: s, received_at: s, message: 'm' }));
      }
      engine.observe(new Map([[trigger.id, events]]));
    }
    engine.tick();
  }
  return { fired, heldBack: engine.stats().suppressed };
}

/** Bursts and quiet stretches: seconds with 0-6 matches, most of them empty. */
const historyArb = fc
  .record({
    span: fc.integer({ min: 60, max: 1200 }),
    busy: fc.array(fc.tuple(fc.integer({ min: 0, max: 1199 }), fc.integer({ min: 1, max: 6 })), {
      maxLength: 120,
    }),
    burst: fc.option(
      fc.record({ at: fc.integer({ min: 0, max: 1100 }), len: fc.integer({ min: 1, max: 90 }) }),
    ),
  })
  .map(({ span, busy, burst }): History => {
    const counts = new Map<number, number>();
    for (const [off, n] of busy) if (off < span) counts.set(FROM + off, (counts.get(FROM + off) ?? 0) + n);
    if (burst)
      for (let i = burst.at; i < Math.min(span, burst.at + burst.len); i++)
        counts.set(FROM + i, (counts.get(FROM + i) ?? 0) + 3);
    return {
      from: FROM,
      to: FROM + span,
      counts: [...counts].sort((a, b) => a[0] - b[0]),
    };
  });

const conditionArb = fc.record({
  op: fc.constantFrom<Op>('gt', 'gte', 'lt', 'lte'),
  value: fc.integer({ min: 0, max: 40 }),
  window_seconds: fc.integer({ min: 1, max: 300 }),
  cooldown_seconds: fc.constantFrom(0, 1, 30, 120, 300),
});

describe('the trigger preview', () => {
  it('fires and holds back as the alert engine does, on random histories and conditions', () => {
    fc.assert(
      fc.property(historyArb, conditionArb, (history, c) => {
        // The engine refuses `lt 0` (nothing is below 0): the form never previews it.
        fc.pre(!(c.op === 'lt' && c.value === 0));
        const preview = previewThreshold(history, c);
        const engine = engineFirings(history, c);
        expect({ fired: preview.fired, heldBack: preview.heldBack }).toEqual(engine);
      }),
      { numRuns: 150 },
    );
  });

  it('counts a burst once, holds back a second one within the cooldown, and charts the window', () => {
    const counts: [number, number][] = [];
    // 20 matches in 10 s at 100 s and at 400 s; 20 more at 1000 s.
    for (const start of [100, 400, 1000]) for (let i = 0; i < 10; i++) counts.push([FROM + start + i, 2]);
    const history = { from: FROM, to: FROM + 1200, counts };
    const c = { op: 'gt' as const, value: 15, window_seconds: 60, cooldown_seconds: 600 };
    const p = previewThreshold(history, c, 12);
    expect(p.fired).toEqual([
      { at: FROM + 107, count: 16 },
      { at: FROM + 1007, count: 16 },
    ]);
    expect(p.heldBack).toBe(1);
    expect(p.extreme).toBe(20);
    expect(p.columns).toEqual([0, 20, 0, 0, 20, 0, 0, 0, 0, 0, 20, 0]);
    // Silence: fewer than 1 in a minute, judged once a whole minute was watched.
    const quiet = previewThreshold(history, { ...c, op: 'lt', value: 1, cooldown_seconds: 0 }, 24);
    expect(quiet.fired.map((f) => f.at - FROM)).toEqual([60, 169, 469, 1069]);
    // 50 s a column: the first minute is not judged; the burst at 100 s keeps the third at 2 or more.
    expect(quiet.columns.slice(0, 3)).toEqual([null, 0, 2]);
  });

  it('takes the search part of a query with pipes', () => {
    expect(searchPart('status:>=500 | stats count() by host')).toBe('status:>=500');
    expect(searchPart('message:"a | b" AND x')).toBe('message:"a | b" AND x');
    expect(searchPart('  error  ')).toBe('error');
  });
});
