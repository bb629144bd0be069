import { ClickHouseEventStore } from '../../src/event-store/clickhouse/clickhouse-event-store.js';
import {
  clickHouseBind,
  compileFilter as compileClickHouse,
} from '../../src/event-store/clickhouse/clickhouse-filter-compiler.js';
import type { EventStore } from '../../src/event-store/event-store.js';
import { SqlParams } from '../../src/event-store/sql/sql-params.js';
import type { FilterNode } from '../../src/filter/ast.js';
import { clickHouseTest, clickHouseTestDatabase, dropClickHouseDatabase } from '../helpers/clickhouse.js';
import { byBranch, openFilterStore, sqlSelectsEach } from './filter-store.js';

/**
 * The event stores the store contract runs on (`describe.each(STORES)`): DuckDB always,
 * ClickHouse when the tests have one (test/helpers/clickhouse.ts).
 */
export interface StoreUnderTest {
  readonly store: EventStore;
  /**
   * For each filter, the ev_ids the store's compiled filter selects among those starting
   * with `prefix`, sorted bytewise: one statement for them all.
   */
  selectsEach(asts: readonly FilterNode[], prefix: string): Promise<string[][]>;
  close(): Promise<void>;
}

export interface StoreKind {
  readonly name: 'duckdb' | 'clickhouse';
  readonly run: boolean;
  /** A filter whose answer the store documents as different from the evaluator's. */
  readonly knownDifference?: (ast: FilterNode) => boolean;
  open(): Promise<StoreUnderTest>;
}

const duckdb: StoreKind = {
  name: 'duckdb',
  run: true,
  knownDifference: (ast) => unicodeTables(ast),
  async open() {
    const store = await openFilterStore();
    return {
      store,
      selectsEach: (asts, prefix) => sqlSelectsEach(store, asts, prefix),
      close: () => store.close(),
    };
  },
};

/** Whether a contains needle in the filter holds σ or ς (clickhouse-filter-compiler.ts: capital sigma). */
function sigmaNeedle(ast: FilterNode): boolean {
  switch (ast.kind) {
    case 'and':
    case 'or':
      return ast.items.some(sigmaNeedle);
    case 'not':
      return sigmaNeedle(ast.item);
    case 'text':
      return /[σς]/.test(ast.value);
    case 'cond':
      return (ast.op === 'contains' || ast.op === 'not_contains') && /[σς]/.test(String(ast.value));
    default:
      return false;
  }
}

/**
 * Whether a regex in the filter has a Unicode class or ignores case: the server's RE2
 * (re2js) has newer Unicode tables than the stores' (characters of Unicode 16+, such as
 * `Ɤ`, classify and fold differently; docs/query-language.md). The agreement on the
 * characters both know, and the pinned difference, are in duckdb-filter-compiler.test.ts.
 */
function unicodeTables(ast: FilterNode): boolean {
  switch (ast.kind) {
    case 'and':
    case 'or':
      return ast.items.some(unicodeTables);
    case 'not':
      return unicodeTables(ast.item);
    case 'cond':
      return ast.op === 'regex' && /\\[pP]|\(\?[a-zA-Z]*i/.test(String(ast.value));
    default:
      return false;
  }
}

const clickhouse: StoreKind = {
  name: 'clickhouse',
  run: clickHouseTest.run,
  knownDifference: (ast) => sigmaNeedle(ast) || unicodeTables(ast),
  async open() {
    const { url, database } = clickHouseTestDatabase();
    const store = await ClickHouseEventStore.open({ url });
    return {
      store,
      async selectsEach(asts, prefix) {
        if (asts.length === 0) return [];
        const params = new SqlParams(clickHouseBind);
        const scope = params.add(prefix);
        const branches = asts.map(
          (ast, i) =>
            `SELECT toUInt32(${i}) AS q, ev_id FROM ${database}.events WHERE startsWith(ev_id, ${scope}) AND ${compileClickHouse(ast, params)}`,
        );
        const rows = await store.runSql(
          `SELECT q, ev_id FROM (${branches.join(' UNION ALL ')}) ORDER BY q, ev_id`,
        );
        return byBranch(asts.length, rows);
      },
      async close() {
        await store.close();
        await dropClickHouseDatabase(database);
      },
    };
  },
};

export const STORES: readonly StoreKind[] = [duckdb, clickhouse];
