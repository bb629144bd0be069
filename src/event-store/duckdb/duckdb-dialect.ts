import type { EventStoreDialect } from '../store-dialect.js';
import { fieldValuesSql } from './duckdb-fields.js';
import { compileFilter } from './duckdb-filter-compiler.js';
import { DUCKDB_ORDER, DUCKDB_PIPES } from './duckdb-plans.js';
import type { DuckDbReads } from './duckdb-reads.js';
import { type DuckDbStatement, duckDbPlans } from './duckdb-statements.js';

/**
 * DuckDB as one dialect object (store-dialect.ts): its filter hooks, order and pipes, the
 * plans as statements built when they are planned (each reads its scope by stream
 * membership or by filter, and the word index's ranges, as the reads decide: `reach`),
 * and the reads as its driver.
 */
export function duckDbDialect(reads: DuckDbReads): EventStoreDialect<DuckDbStatement> {
  return {
    filter: compileFilter,
    order: DUCKDB_ORDER,
    pipes: DUCKDB_PIPES,
    plans: {
      ...duckDbPlans(reads.reach, reads.fewMatches, reads.event, reads.coldRows),
      // The field list's statement (duckdb-fields.ts), built when planned as the others are.
      fieldValues: (plan) => () => {
        const reach = reads.reach(plan);
        return fieldValuesSql(reach.plan, reach, reads.estimate(plan.range.fromMs, plan.range.toMs));
      },
    },
    driver: reads,
  };
}
