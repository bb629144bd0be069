/**
 * The pattern_rate judge's rules on a clock it is given (docs/api/alerting.md): counts come
 * from a list of (pattern, ts) standing for what the trigger's reader may read, so each
 * case states its windows exactly. The store's side is held by the API test.
 */
import { describe, expect, it } from 'vitest';
import type { AlertTrigger, Firing } from '../../../src/features/alerting/alert-engine.js';
import type { PatternRateCondition } from '../../../src/features/alerting/conditions.js';
import { headline } from '../../../src/features/alerting/notification.js';
import {
  MAX_FIRINGS_PER_WINDOW,
  PatternRateJudge,
  patternRateCondition,
  type Span,
} from '../../../src/features/alerting/pattern-rate.js';

/** A window index far from the epoch, as real ones are. */
const K = 29_000_000;

function setup(condition: Partial<PatternRateCondition>, cooldown = 0, triggers = 1) {
  const events: Array<{ id: string; ts: number }> = [];
  /** Every span the store was asked to count. */
  const counted: Span[] = [];
  const got: Firing[] = [];
  const cond = patternRateCondition({ type: 'pattern_rate', window_seconds: 60, ...condition });
  const W = cond.window_seconds * 1000;
  let now = K * W;
  const judge = new PatternRateJudge({
    now: () => now,
    settleMs: 1000,
    sends: () => true,
    templates: async (ids) => new Map(ids.map((id) => [id, `template of ${id}`])),
    linkBase: () => 'http://ui',
    onFiring: (f) => got.push(f),
    onError: (_id, err) => {
      throw err;
    },
  });
  const trigger: AlertTrigger = {
    id: 1,
    name: 'rates',
    severity: 'high',
    description: '',
    query: 'app:web',
    condition: cond,
    notify: [1],
    cooldown_seconds: cooldown,
    create_task: false,
    version: 'v',
    createdAtMs: now,
  };
  const inSpan = (s: Span) => events.filter((e) => e.ts >= s.fromMs && e.ts < s.toMs);
  judge.setTriggers(
    Array.from({ length: triggers }, (_, i) => ({
      trigger: { ...trigger, id: i + 1 },
      condition: cond,
      version: 'v',
      reads: {
        // Every trigger here counts the same filter in the same scope.
        key: 'app:web|scope',
        count: async (s: Span) => {
          counted.push(s);
          const m = new Map<string, number>();
          for (const e of inSpan(s)) m.set(e.id, (m.get(e.id) ?? 0) + 1);
          return m;
        },
        samples: async (id: string, s: Span) =>
          inSpan(s)
            .filter((e) => e.id === id)
            .slice(-10)
            .map((e, i) => ({ ev_id: `${id}-${i}`, ts: e.ts / 1000, message: id })),
      },
    })),
  );
  return {
    got,
    counted,
    W,
    /** `n` events of `id` in window `K + k`. */
    add(id: string, k: number, n: number, fromMs = (K + k) * W) {
      for (let i = 0; i < n; i++) events.push({ id, ts: fromMs + Math.floor((i * W) / Math.max(n, 1)) });
    },
    /** Moves the clock past window `K + k`'s settle time and judges. */
    async judge(k: number) {
      now = (K + k + 1) * W + 1000;
      await judge.tick();
    },
    told: () =>
      got.map((f) => `${f.notification.kind} ${f.notification.change} ${f.notification.pattern?.pattern_id}`),
    judgeState: judge,
  };
}

describe('pattern_rate judge', () => {
  it('judges each window once, from the one it was made in, a settle time after it ends', async () => {
    const s = setup({});
    s.add('a', -1, 5);
    s.add('a', 0, 50);
    await s.judge(-1); // before its first window: nothing to judge
    expect(s.judgeState.judged).toBe(0);
    await s.judge(0);
    await s.judge(0);
    expect(s.judgeState.judged).toBe(1);
    expect(s.told()).toEqual(['fire up a']);
  });

  it('rolling_24h compares with the day before, scaled to the window', async () => {
    const s = setup({ baseline: 'rolling_24h', min_ratio: 2, min_count: 10 });
    // One event a minute all day: a baseline of 1 in a 60 s window; 300 now is 300×, 1 is none.
    for (let j = -1440; j < 0; j++) {
      s.add('a', j, 1);
      s.add('b', j, 1);
    }
    s.add('a', 0, 300);
    s.add('b', 0, 1);
    await s.judge(0);
    expect(s.told()).toEqual(['fire up a']);
    const n = s.got[0]?.notification;
    expect(n).toMatchObject({ count: 300, baseline_count: 1, ratio: 300 });
    expect(n?.baseline_window).toEqual({ ts_from: ((K - 1440) * 60_000) / 1000, ts_to: (K * 60_000) / 1000 });
  });

  it('notifies the 20 highest scores of a window; the rest fire silently and are counted', async () => {
    const s = setup({ min_count: 5 });
    for (let p = 0; p < 25; p++) {
      s.add(`p${String(p).padStart(2, '0')}`, -1, 5);
      s.add(`p${String(p).padStart(2, '0')}`, 0, 20 + p * 10);
    }
    await s.judge(0);
    expect(s.got).toHaveLength(MAX_FIRINGS_PER_WINDOW);
    expect(s.judgeState.suppressed).toBe(5);
    // The biggest surges are the ones told.
    expect(s.told()[0]).toBe('fire up p24');
    expect(s.told()).not.toContain('fire up p04');
    // All recover; only the told ones say so.
    for (let p = 0; p < 25; p++) s.add(`p${String(p).padStart(2, '0')}`, 1, 5);
    await s.judge(1);
    expect(s.told().filter((x) => x.startsWith('recover'))).toHaveLength(MAX_FIRINGS_PER_WINDOW);
  });

  it('holds a surge against its firing window, and keeps to the cooldown per pattern', async () => {
    const s = setup({}, 3600);
    s.add('a', -1, 10);
    s.add('a', 0, 100);
    s.add('a', 1, 40); // still ≥ 3 × 10: firing, nothing told
    s.add('a', 2, 10); // recovers
    s.add('a', 3, 10);
    s.add('a', 4, 100); // a second surge within the cooldown: fires silently
    s.add('a', 5, 10);
    for (let k = 0; k <= 5; k++) await s.judge(k);
    expect(s.told()).toEqual(['fire up a', 'recover up a']);
    expect(s.got[1]?.notification).toMatchObject({ count: 10, baseline_count: 10, ratio: 1 });
    expect(s.judgeState.cooledDown).toBe(1);
  });

  it('direction up never tells a fall; down never a rise', async () => {
    const up = setup({ direction: 'up' });
    const down = setup({ direction: 'down' });
    for (const s of [up, down]) {
      s.add('rise', -1, 10);
      s.add('rise', 0, 100);
      s.add('fall', -1, 100);
      s.add('fall', 0, 10);
      await s.judge(0);
    }
    expect(up.told()).toEqual(['fire up rise']);
    expect(down.told()).toEqual(['fire down fall']);
  });

  it('headlines say what the pattern did', async () => {
    const s = setup({ window_seconds: 10 });
    s.add('a', -1, 30);
    s.add('a', 0, 300);
    await s.judge(0);
    const n = s.got[0]?.notification;
    if (!n) throw new Error('no notification');
    expect(headline(n)).toBe('[high] rates: pattern "template of a" up 10.0× (300 vs 30 in 10 s)');
    expect(headline({ ...n, change: 'down', count: 3 })).toBe(
      '[high] rates: pattern "template of a" down 10.0× (3 vs 30 in 10 s)',
    );
    expect(headline({ ...n, kind: 'recover', change: 'new', count: 0, baseline_count: 0 })).toBe(
      '[high] rates: recovered, pattern "template of a" new (0 vs 0 in 10 s)',
    );
  });

  it('rolling_24h costs the same each window, however many windows pass: the day is read once', async () => {
    const s = setup({ baseline: 'rolling_24h', min_ratio: 2, min_count: 5, direction: 'up' });
    // A day of varied traffic before, then 60 windows judged one after the other.
    for (let j = -1440; j < 60; j++) s.add(j % 7 === 0 ? 'b' : 'a', j, 1 + (Math.abs(j) % 5));
    s.add('a', 45, 200);
    const perWindow: number[] = [];
    for (let k = 0; k < 60; k++) {
      const before = s.counted.reduce((ms, c) => ms + c.toMs - c.fromMs, 0);
      await s.judge(k);
      perWindow.push(s.counted.reduce((ms, c) => ms + c.toMs - c.fromMs, 0) - before);
    }
    // The first window reads the day and the two windows it judges; every later one two windows' width (its own, and the
    // one leaving the day), never the day again.
    expect(perWindow[0]).toBe(1442 * s.W);
    expect(new Set(perWindow.slice(1))).toEqual(new Set([2 * s.W]));
    // And the baseline is the day's, as a whole read would give it.
    const fired = s.got.find((f) => f.notification.window?.ts_from === ((K + 45) * s.W) / 1000);
    let day = 0;
    for (let j = 45 - 1440; j < 45; j++) if (j % 7 !== 0) day += 1 + (Math.abs(j) % 5);
    expect(fired?.notification.baseline_count).toBeCloseTo(day / 1440, 3);
  });

  it('triggers counting the same filter in the same scope share their reads', async () => {
    const one = setup({ baseline: 'rolling_24h' });
    const hundred = setup({ baseline: 'rolling_24h' }, 0, 100);
    for (const s of [one, hundred]) for (let k = 0; k < 5; k++) await s.judge(k);
    expect(hundred.counted.length).toBe(one.counted.length);
  });
});
