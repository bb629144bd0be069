import type { DuckDBValue } from '@duckdb/node-api';
import type { StoredEvent } from '../../core/event.js';
import type { PlanDialect } from '../plan-executor.js';
import type { QueryPlan, SearchPlan } from '../query-plan.js';
import type { ColdFile, ColdFiles } from './cold-files.js';
import { changeCountsSql, fieldPresenceSql } from './duckdb-changes.js';
import {
  byIdSql,
  type Compiled,
  hourCountsSql,
  lastnSql,
  type Narrowing,
  patternCountsSql,
  patternSamplesSql,
  type Reach,
  searchCountSql,
  searchPageSql,
  summarySql,
  tableSql,
  timelineSql,
  topnSql,
} from './duckdb-plans.js';

/** A DuckDB statement: built when it is planned (statement-gate.ts). */
export type DuckDbStatement = () => Compiled;

/**
 * The plans as DuckDB statements for the shared executor (plan-executor.ts). A statement
 * is built when it is planned (the store's `start`), so its reach (its scope by stream
 * membership or by filter, the word index's candidate ranges) is that of the snapshot it
 * reads.
 */
export function duckDbPlans(
  reach: <P extends QueryPlan>(plan: P) => Reach<P>,
  fewMatches: (plan: SearchPlan) => boolean,
  event: (row: Record<string, DuckDBValue>) => StoredEvent,
  /** The rows of the cold files `which` picks, in the hot table's shape (none: undefined). */
  coldRows: (which: (cold: ColdFiles) => readonly ColdFile[]) => Narrowing['cold'],
): Omit<PlanDialect<DuckDbStatement>, 'fieldValues'> {
  // Each statement reads its plan as the store's reach has it when the statement is built.
  const at =
    <P extends QueryPlan>(plan: P, sql: (plan: P, narrowing: Narrowing) => Compiled) =>
    () => {
      const r = reach(plan);
      return sql(r.plan, r);
    };
  return {
    // The scope is the store's to apply (`reach`): by the stream membership it keeps, or
    // by the scope's filter.
    scoped: (plan) => plan,
    searchRows: (plan) => at(plan, searchPageSql),
    searchCount: (plan) => at(plan, searchCountSql),
    fewMatches,
    topn: (plan) => at(plan, topnSql),
    lastn: (plan) => at(plan, lastnSql),
    summary: (plan) => at(plan, summarySql),
    timeline: (plan) => at(plan, timelineSql),
    patternCounts: (plan) => at(plan, patternCountsSql),
    patternSamples: (plan, ids) => at(plan, (p, n) => patternSamplesSql(p, ids, n)),
    // Each window narrowed by its own reach (word index, stream membership).
    changeCounts: (plan) => () => {
      const focus = reach(plan);
      return changeCountsSql(focus.plan, focus, reach({ ...plan, range: plan.baseline }));
    },
    fieldPresence: (plan) => at(plan, fieldPresenceSql),
    tableRows: (plan) => at(plan, (p, n) => tableSql(p, 'rows', n)),
    tableCount: (plan) => at(plan, (p, n) => tableSql(p, 'count', n)),
    // The runtime's own reads: no plan, so no reach (it checks an event's scope itself).
    byId: (evId, receivedAt) => () =>
      byIdSql(
        evId,
        receivedAt,
        coldRows((c) => c.holding(evId)),
      ),
    hourCounts: () => () => hourCountsSql(coldRows((c) => c.all())),
    event: (row) => event(row as Record<string, DuckDBValue>),
  };
}
