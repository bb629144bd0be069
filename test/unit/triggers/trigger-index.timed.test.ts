import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TriggerIndex } from '../../../src/features/triggers/trigger-index.js';
import { and, cond, type FilterNode, or, text } from '../../../src/filter/ast.js';
import { compilePredicate } from '../../../src/filter/evaluate.js';
import { event } from '../../event-store/filter-store.js';
import { condition, eventsArb, filter } from '../../helpers/filter-arbitraries.js';

/** What matching every trigger's predicate one by one gives: the index must agree. */
const bruteForce = (triggers: FilterNode[], e: Parameters<ReturnType<typeof compilePredicate>>[0]) =>
  triggers.flatMap((f, id) => (compilePredicate(f)(e) ? [id] : []));

const indexed = (triggers: FilterNode[]) => new TriggerIndex(triggers.map((filter, id) => ({ id, filter })));

// Equality-led filters exercise the index's buckets; plain random ones its fallback.
const keyed = fc
  .tuple(condition, filter)
  .map(([c, f]) => and(c, f))
  .filter(
    (f) => f.kind === 'and' && f.items.some((i) => i.kind === 'cond' && (i.op === 'eq' || i.op === 'in')),
  );

describe('TriggerIndex', () => {
  it('matches exactly the triggers whose predicate holds, on random triggers and events', () => {
    fc.assert(
      fc.property(
        eventsArb,
        fc.array(fc.oneof(filter, keyed, keyed), { minLength: 1, maxLength: 30 }),
        (events, triggers) => {
          const index = indexed(triggers);
          for (const e of events) {
            expect(
              index.match(e).sort((a, b) => a - b),
              JSON.stringify(e),
            ).toEqual(bruteForce(triggers, e));
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('buckets equality triggers by value and still evaluates the rest of the filter', () => {
    const triggers = [
      and(cond('app', 'eq', 'sshd'), text('failed password')),
      cond('status', 'in', [500, '503']),
      or(cond('app', 'eq', 'nginx'), cond('app', 'eq', 'sshd')),
      cond('k', 'eq', 'v'),
    ];
    const index = indexed(triggers);
    const sshFail = event('a', { app: 'sshd', message: 'Failed password for root' });
    expect(index.match(sshFail).sort()).toEqual([0, 2]);
    expect(index.match(event('b', { app: 'sshd', message: 'Accepted key' }))).toEqual([2]);
    expect(index.match(event('c', { status: 503 }))).toEqual([1]);
    expect(index.match(event('d', { status: 500, fields: { k: 'v' } })).sort()).toEqual([1, 3]);
    expect(index.match(event('e', { fields: { k: 'w' } }))).toEqual([]);
  });

  it('matches a backtracking bomb in linear time (RE2)', () => {
    const index = indexed([cond('message', 'regex', '^(a+)+$')]);
    const started = performance.now();
    expect(index.match(event('x', { message: `${'a'.repeat(5000)}!` }))).toEqual([]);
    expect(index.match(event('y', { message: 'a'.repeat(5000) }))).toEqual([0]);
    expect(performance.now() - started).toBeLessThan(100);
  });
});
