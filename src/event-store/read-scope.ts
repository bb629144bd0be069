import type { FilterNode } from '../filter/ast.js';
import { and, not, TRUE } from '../filter/builders.js';
import { compilePredicate, type EventLike } from '../filter/evaluate.js';
import type { QueryPlan } from './query-plan.js';

/**
 * The events a read may see (ADR 0013). Every plan, stream and event-by-id read states
 * one, and the event store ANDs its filter into what it runs (plan-executor.ts and each
 * engine's stream and getById), so no read path can leave it out. `filter` null: every
 * event. `key` names the set: reads with equal keys see the same events and may share
 * their work.
 */
export interface ReadScope {
  readonly key: string;
  readonly filter: FilterNode | null;
  /**
   * The streams the filter stands for, when it is made of streams (ADR 0016): the key of
   * the rules it was made from, the readable streams that have a rule, and whether the
   * events no rule claims (Default) are readable. A store that keeps each event's stream
   * membership under the same rules reads the scope by it; any other reads the filter.
   */
  readonly streams?: {
    readonly rules: string;
    readonly ids: readonly number[];
    readonly unclaimed: boolean;
  };
}

/**
 * The streams' rules, as read scopes are made from them (ADR 0016): each stream that has a
 * rule, in id order, and a key naming exactly these rules. Given to the event store, which
 * may keep each event's membership of them.
 */
export interface StreamRules {
  readonly key: string;
  readonly streams: ReadonlyArray<{ readonly id: number; readonly filter: FilterNode }>;
}

/** An administrator's reads: every event. */
export const EVERY_EVENT: ReadScope = Object.freeze({ key: 'all', filter: null });

/**
 * The reads the system makes for itself, for no user (the journald duplicate check,
 * stream counts shown only to those who may read the stream, retention). Grep for it.
 */
export const SYSTEM_SCOPE: ReadScope = Object.freeze({ key: 'system', filter: null });

/** A user who may read no stream: empty results, not errors. */
export const NO_EVENT: ReadScope = Object.freeze({ key: 'none', filter: not(TRUE) });

/** A filter narrowed to what the scope may read. */
export const scopedFilter = (scope: ReadScope, filter: FilterNode): FilterNode =>
  scope.filter ? and(scope.filter, filter) : filter;

/** The plan an engine runs: its filter narrowed to its scope. */
export const scopedPlan = <P extends QueryPlan>(plan: P): P =>
  plan.scope.filter ? { ...plan, filter: scopedFilter(plan.scope, plan.filter) } : plan;

const predicates = new WeakMap<FilterNode, (e: EventLike) => boolean>();

/** Whether one event is in the scope: the JavaScript evaluator, held equal to both SQL compilers. */
export function inScope(scope: ReadScope, event: EventLike): boolean {
  if (!scope.filter) return true;
  let p = predicates.get(scope.filter);
  if (!p) {
    p = compilePredicate(scope.filter);
    predicates.set(scope.filter, p);
  }
  return p(event);
}
