/**
 * The incremental window counter against the straightforward computation: random
 * streams of events and evaluation times give the same firings and recoveries as counting
 * every group's events in the window from scratch at each evaluation.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  holds,
  MAX_GROUPS,
  type ThresholdCondition,
  type ThresholdOp,
  ThresholdWindows,
} from '../../../src/features/alerting/threshold.js';

type Step = { kind: 'event'; group: string; dt: number } | { kind: 'eval'; dt: number };

function naive(cond: ThresholdCondition, start: number, steps: Step[]) {
  const events: Array<{ group: string; at: number }> = [];
  const firing = new Map<string, boolean>();
  const since = new Map<string, number>();
  if (cond.group_by.length === 0) since.set('[]', start);
  const out: string[] = [];
  let now = start;
  const silence = cond.op === 'lt' || cond.op === 'lte';
  for (const step of steps) {
    now += step.dt;
    if (step.kind === 'event') {
      events.push({ group: step.group, at: now });
      if (!since.has(step.group)) since.set(step.group, Math.floor(now / 1000) * 1000);
      continue;
    }
    const nowS = Math.floor(now / 1000);
    for (const [group, from] of since) {
      const count = events.filter(
        (e) => e.group === group && Math.floor(e.at / 1000) > nowS - cond.window_seconds,
      ).length;
      const on = (!silence || now - from >= cond.window_seconds * 1000) && holds(cond.op, count, cond.value);
      const was = firing.get(group) ?? false;
      if (on !== was) out.push(`${now} ${on ? 'fire' : 'recover'} ${group} ${count}`);
      firing.set(group, on);
      // A forgotten group starts again from its next event (only without silence, where
      // `since` does not matter).
      if (!silence && group !== '[]' && count === 0 && !on) since.delete(group);
    }
  }
  return out;
}

function incremental(cond: ThresholdCondition, start: number, steps: Step[]) {
  const w = new ThresholdWindows(cond, start);
  const out: string[] = [];
  let now = start;
  for (const step of steps) {
    now += step.dt;
    if (step.kind === 'event') w.add(step.group, now);
    else for (const t of w.evaluate(now)) out.push(`${now} ${t.kind} ${t.group} ${t.count}`);
  }
  return out;
}

/**
 * Two nodes: node A counts its events itself, node B's reach A as per-second counts,
 * published every 250 ms and up to 200 ms on the bus; A evaluates `lagMs` behind its
 * clock. Returns A's firings and the straightforward computation's: at each evaluation's
 * lagged time T, the events (of either node) of the seconds of the window ending in T's.
 */
function shared(cond: ThresholdCondition, start: number, steps: SharedStep[], lagMs: number) {
  const w = new ThresholdWindows(cond, start);
  const out: string[] = [];
  const expected: string[] = [];
  const inFlight: Array<{ arrives: number; group: string; second: number }> = [];
  const events: Array<{ group: string; second: number }> = [];
  const firing = new Map<string, boolean>();
  const silence = cond.op === 'lt' || cond.op === 'lte';
  let now = start;
  let lastEval = Number.NEGATIVE_INFINITY;
  for (const step of steps) {
    now += step.dt;
    inFlight.sort((a, b) => a.arrives - b.arrives);
    while (inFlight.length && (inFlight[0] as { arrives: number }).arrives <= now) {
      const c = inFlight.shift() as { group: string; second: number };
      w.addCount(c.group, c.second * 1000, 1);
    }
    if (step.kind === 'event') {
      const second = Math.floor(now / 1000);
      events.push({ group: step.group, second });
      if (step.remote)
        inFlight.push({ arrives: Math.ceil((now + 1) / 250) * 250 + (now % 200), group: step.group, second });
      else w.add(step.group, now);
      continue;
    }
    const at = now - lagMs;
    if (at < lastEval) continue; // the clock only moves forward
    lastEval = at;
    for (const t of w.evaluate(at)) out.push(`${at} ${t.kind} ${t.group} ${t.count}`);
    const atS = Math.floor(at / 1000);
    const since = new Map<string, number>();
    if (cond.group_by.length === 0) since.set('[]', start);
    for (const e of events) if (e.second <= atS && !since.has(e.group)) since.set(e.group, e.second * 1000);
    for (const [group, from] of since) {
      const count = events.filter(
        (e) => e.group === group && e.second <= atS && e.second > atS - cond.window_seconds,
      ).length;
      const on = (!silence || at - from >= cond.window_seconds * 1000) && holds(cond.op, count, cond.value);
      if (on !== (firing.get(group) ?? false))
        expected.push(`${at} ${on ? 'fire' : 'recover'} ${group} ${count}`);
      firing.set(group, on);
    }
  }
  return { out, expected };
}

type SharedStep = Step & { remote?: boolean };

const step = (groups: string[]) =>
  fc.oneof(
    fc.record({
      kind: fc.constant('event' as const),
      group: fc.constantFrom(...groups),
      dt: fc.integer({ min: 0, max: 1500 }),
    }),
    fc.record({ kind: fc.constant('eval' as const), dt: fc.integer({ min: 0, max: 4000 }) }),
  );

/** A random condition (grouped by host or not) and a start time. */
const scenario = fc
  .record({
    op: fc.constantFrom<ThresholdOp>('gt', 'gte', 'lt', 'lte'),
    window_seconds: fc.integer({ min: 1, max: 10 }),
    value: fc.integer({ min: 0, max: 6 }),
    grouped: fc.boolean(),
    startMs: fc.integer({ min: 0, max: 999 }),
  })
  .map(({ grouped, startMs, ...c }) => ({
    cond: { type: 'threshold', ...c, group_by: grouped ? ['host'] : [] } as ThresholdCondition,
    start: 1_700_000_000_000 + startMs,
  }));

/** Without group_by every event is of the one group "[]". */
const groupsOf = <S extends Step>(cond: ThresholdCondition, steps: S[]): S[] =>
  cond.group_by.length ? steps : steps.map((s) => (s.kind === 'event' ? { ...s, group: '[]' } : s));

describe('threshold windows', () => {
  it('fire and recover as a straightforward window computation does', () => {
    fc.assert(
      fc.property(
        scenario,
        fc.array(step(['["a"]', '["b"]', '["c"]']), { maxLength: 300 }),
        ({ cond, start }, raw) => {
          const steps = groupsOf(cond, raw);
          expect(incremental(cond, start, steps)).toEqual(naive(cond, start, steps));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('in a cluster, counts heard from another node fire as if the node had seen the events', () => {
    fc.assert(
      fc.property(
        scenario,
        fc.array(
          fc.tuple(step(['["a"]', '["b"]']), fc.boolean()).map(([s, remote]) => ({ ...s, remote })),
          { maxLength: 300 },
        ),
        ({ cond, start }, raw) => {
          const { out, expected } = shared(cond, start, groupsOf(cond, raw), 1500);
          // The same transitions at the same times (within one evaluation, in any order).
          expect([...out].sort()).toEqual([...expected].sort());
        },
      ),
      { numRuns: 500 },
    );
  });

  it('fires once per crossing, not on every event over the value', () => {
    const w = new ThresholdWindows(
      { type: 'threshold', window_seconds: 60, op: 'gt', value: 2, group_by: [] },
      0,
    );
    for (let i = 0; i < 10; i++) w.add('[]', 1000 + i, { ev_id: `e${i}`, ts: i, message: `m${i}` });
    const fired = w.evaluate(1100);
    expect(fired).toMatchObject([{ kind: 'fire', count: 10 }]);
    expect(fired[0]?.samples.map((s) => s.ev_id)).toEqual([
      'e0',
      'e1',
      'e2',
      'e3',
      'e4',
      'e5',
      'e6',
      'e7',
      'e8',
      'e9',
    ]);
    w.add('[]', 2000);
    expect(w.evaluate(2000)).toEqual([]);
    // The window slides past the events: recovery, then a new crossing fires again.
    expect(w.evaluate(62_000)).toMatchObject([{ kind: 'recover', count: 0 }]);
    for (let i = 0; i < 3; i++) w.add('[]', 63_000);
    expect(w.evaluate(63_000)).toMatchObject([{ kind: 'fire', count: 3 }]);
  });

  it('announces silence only after watching a whole window', () => {
    const w = new ThresholdWindows(
      { type: 'threshold', window_seconds: 10, op: 'lt', value: 1, group_by: ['host'] },
      0,
    );
    expect(w.evaluate(60_000)).toEqual([]); // no group seen yet
    w.add('["web1"]', 60_000);
    expect(w.evaluate(65_000)).toEqual([]);
    expect(w.evaluate(70_500)).toMatchObject([{ kind: 'fire', group: '["web1"]', count: 0 }]);
    w.add('["web1"]', 71_000);
    expect(w.evaluate(71_000)).toMatchObject([{ kind: 'recover', count: 1 }]);
  });
});

describe('bounds', () => {
  it('keeps windows for at most MAX_GROUPS groups of a trigger and counts the ones turned away', () => {
    const w = new ThresholdWindows(
      { type: 'threshold', window_seconds: 60, op: 'gt', value: 5, group_by: ['host'] },
      0,
    );
    for (let i = 0; i < MAX_GROUPS + 25; i++)
      w.add(JSON.stringify([`h${i}`]), 1000, { ev_id: `e${i}`, ts: 1, message: 'm' });
    expect(w.size).toBe(MAX_GROUPS);
    expect(w.refusedGroups).toBe(25);
  });
});
