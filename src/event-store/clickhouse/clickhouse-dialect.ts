import type { EventStoreDialect } from '../store-dialect.js';
import { changeCountsSql, fieldPresenceSql } from './clickhouse-changes.js';
import type { ClickHouseDriver } from './clickhouse-driver.js';
import { fieldValuesSql } from './clickhouse-fields.js';
import { compileFilter } from './clickhouse-filter-compiler.js';
import { CLICKHOUSE_ORDER, CLICKHOUSE_PIPES, type Compiled, clickHousePlans } from './clickhouse-plans.js';

/**
 * ClickHouse as one dialect object (store-dialect.ts): its filter hooks, order and pipes
 * in ClickHouse 18.16's words, the plans as statements on `table` (the Distributed one on
 * a cluster), and the driver over its servers. Scopes are read by their filters: no
 * stream membership is kept here (ADR 0016).
 */
export function clickHouseDialect(driver: ClickHouseDriver, table: string): EventStoreDialect<Compiled> {
  return {
    filter: compileFilter,
    order: CLICKHOUSE_ORDER,
    pipes: CLICKHOUSE_PIPES,
    // The field list's statement in a file of its own (clickhouse-fields.ts).
    plans: {
      ...clickHousePlans(table),
      fieldValues: (plan) => fieldValuesSql(table, plan),
      changeCounts: (plan) => changeCountsSql(table, plan),
      fieldPresence: (plan) => fieldPresenceSql(table, plan),
    },
    driver,
  };
}
