import type { EventStore } from '../../event-store/event-store.js';
import { EVERY_EVENT, type ReadScope } from '../../event-store/read-scope.js';
import type { FilterNode } from '../../filter/ast.js';
import { and, cond } from '../../filter/builders.js';
import { SAMPLE_MESSAGE_CHARS } from './alert-engine.js';
import type { Span, WindowReads } from './pattern-rate.js';
import { SAMPLES } from './threshold.js';

/** Patterns counted in one window at most (a GROUP BY `pattern_id`: bounded by the live patterns). */
const MAX_PATTERNS = 100_000;

/**
 * One read scope of several: what every one of them may read (a trigger reads within its
 * `run_as` user's scope and that of whoever set where each of its channels sends). The
 * event store applies it as it applies any scope.
 */
export function everyScope(scopes: readonly ReadScope[]): ReadScope {
  const distinct = [...new Map(scopes.map((s) => [s.key, s])).values()];
  if (distinct.length === 1) return distinct[0] as ReadScope;
  if (distinct.length === 0) return EVERY_EVENT;
  const filters = distinct.flatMap((s) => (s.filter ? [s.filter] : []));
  return {
    key: distinct.map((s) => s.key).join('&'),
    filter: filters.length === 0 ? null : filters.length === 1 ? (filters[0] as FilterNode) : and(...filters),
  };
}

/**
 * How a pattern_rate trigger counts its windows: plans over the event store by `ts`, of the
 * events its filter matches, in `scope` (the store narrows every plan to its scope).
 */
export function storeReads(events: EventStore, filter: FilterNode, scope: ReadScope): WindowReads {
  return {
    key: JSON.stringify([filter, scope.key]),
    async count(span: Span) {
      const r = await events.execute({
        kind: 'topn',
        scope,
        filter,
        range: span,
        field: 'pattern_id',
        n: MAX_PATTERNS,
      });
      return new Map(r.items.map((i) => [i.value, i.count]));
    },
    async samples(patternId: string, span: Span) {
      const r = await events.execute({
        kind: 'search',
        scope,
        filter: and(filter, cond('pattern_id', 'eq', patternId)),
        range: span,
        sort: [{ field: 'ts', desc: true }],
        limit: SAMPLES,
        offset: 0,
        count: false,
      });
      return r.events.reverse().map((e) => ({
        ev_id: e.ev_id,
        ts: e.ts / 1000,
        message:
          e.message !== null && e.message.length > SAMPLE_MESSAGE_CHARS
            ? `${e.message.slice(0, SAMPLE_MESSAGE_CHARS)}…`
            : e.message,
      }));
    },
  };
}
