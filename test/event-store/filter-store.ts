import { emptyEvent, type NormalisedEvent } from '../../src/core/event.js';
import { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import { compileFilter } from '../../src/event-store/duckdb/duckdb-filter-compiler.js';
import type { EventStore } from '../../src/event-store/event-store.js';
import { SqlParams } from '../../src/event-store/sql/sql-params.js';
import type { FilterNode } from '../../src/filter/ast.js';
import { compilePredicate, type EventLike } from '../../src/filter/evaluate.js';

/** An in-memory store; `open` registers the filter functions (registerFilterFunctions). */
export function openFilterStore(): Promise<DuckDbEventStore> {
  return DuckDbEventStore.open({ dataDir: ':memory:', memoryLimit: '256MB', checkpointThreshold: '16MB' });
}

export function event(ev_id: string, fields: Partial<NormalisedEvent> = {}): NormalisedEvent {
  return emptyEvent({
    ev_id,
    ts: Date.UTC(2024, 4, 1, 10),
    received_at: Date.UTC(2024, 4, 1, 10, 0, 1),
    ...fields,
  });
}

/** Appends `events` and returns them as the evaluator sees them (with `stored_at`). */
export async function appendEvents(
  store: EventStore,
  events: readonly NormalisedEvent[],
): Promise<EventLike[]> {
  const { storedAt } = await store.append(events);
  return events.map((e) => ({ ...e, stored_at: storedAt }));
}

/** The ev_ids the compiled filter selects (among those starting with `prefix`), sorted. */
export async function sqlSelects(store: DuckDbEventStore, ast: FilterNode, prefix = ''): Promise<string[]> {
  const params = new SqlParams(undefined, store.extras.columnOf);
  const scope = params.add(prefix);
  const where = compileFilter(ast, params);
  const rows = await store.runSql(
    `SELECT ev_id FROM events WHERE starts_with(ev_id, ${scope}) AND ${where} ORDER BY ev_id`,
    params.values,
  );
  return rows.map((r) => String(r.ev_id));
}

/**
 * The ev_ids each compiled filter selects (among those starting with `prefix`), sorted, in
 * one statement: each filter the WHERE of its own branch of a UNION ALL (a statement per
 * filter was most of the property tests' time).
 */
export async function sqlSelectsEach(
  store: DuckDbEventStore,
  asts: readonly FilterNode[],
  prefix: string,
): Promise<string[][]> {
  if (asts.length === 0) return [];
  const params = new SqlParams(undefined, store.extras.columnOf);
  const scope = params.add(prefix);
  const branches = asts.map(
    (ast, i) =>
      `SELECT ${i} AS q, ev_id FROM events WHERE starts_with(ev_id, ${scope}) AND ${compileFilter(ast, params)}`,
  );
  const rows = await store.runSql(
    `SELECT q, ev_id FROM (${branches.join(' UNION ALL ')}) ORDER BY q, ev_id`,
    params.values,
  );
  return byBranch(asts.length, rows);
}

/** Rows `{ q, ev_id }` of a UNION ALL of `n` branches, as each branch's ev_ids in order. */
export function byBranch(n: number, rows: readonly Record<string, unknown>[]): string[][] {
  const each = Array.from({ length: n }, (): string[] => []);
  for (const r of rows) {
    const ids = each[Number(r.q)];
    if (!ids) throw new Error(`a row of no branch: ${JSON.stringify(r)}`);
    ids.push(String(r.ev_id));
  }
  return each;
}

/** The ev_ids the JavaScript evaluator accepts, sorted as DuckDB sorts them (bytewise). */
export function jsSelects(events: readonly EventLike[], ast: FilterNode): string[] {
  const p = compilePredicate(ast);
  return events
    .filter(p)
    .map((e) => String(e.ev_id))
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}
