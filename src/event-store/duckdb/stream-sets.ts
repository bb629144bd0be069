import type { DuckDBConnection, DuckDBListValue } from '@duckdb/node-api';
import type { NormalisedEvent } from '../../core/event.js';
import type { FilterNode } from '../../filter/ast.js';
import { compilePredicate, type EventLike } from '../../filter/evaluate.js';
import type { TimeWindow } from '../query-plan.js';
import type { ReadScope, StreamRules } from '../read-scope.js';
import { type FieldColumnOf, SqlParams, sqlTime } from '../sql/sql-params.js';
import { compileFilter } from './duckdb-filter-compiler.js';
import { duckDbValue } from './duckdb-schema.js';

/**
 * Stream membership kept with each event (ADR 0016). A scope made of streams is an OR of
 * their rules, which DuckDB tests row by row above its scan (a user reading 3 streams of
 * 20 paid up to twice an administrator's time for a cheap count). Each event's `streams`
 * column holds a bit per stream rule (bit i: the i-th rule in id order; the bit after the
 * last: no rule takes the event, Default) and the table `stream_membership` the key of the
 * rules it was written under, so such a scope reads `(streams & readable) <> 0`, which
 * DuckDB tests inside its scan on one integer column (an `IN` list or an `OR` it tests
 * above the scan, on every row: measured 1.8× the unscoped count; this, 0.85×).
 *
 * Rules are still what decides: appends write the bits of the rules the store holds, and
 * new rules (`use`) are written over every stored event before scopes are read by them;
 * until then, and for scopes made under other rules, a scope is read by its filter.
 */
export class StreamSets {
  /** The rules the store holds, with each one's bit and predicate; null before any. */
  private rules: {
    key: string;
    bits: Map<number, bigint>;
    /** Each rule's bit, in order. */
    ownBits: bigint[];
    unclaimed: bigint;
    tests: Array<(e: EventLike) => boolean>;
    /** Whether a rule reads `stored_at`. */
    storedAtRead: boolean;
    /** The rules themselves: their bits in SQL (`rewrite`). */
    source: StreamRules;
  } | null = null;
  /**
   * Whether some stored events may have no bits under the table's rules (appended before
   * the store held them, or while it held others, or before this process opened the store).
   */
  private unwritten = true;

  private constructor(
    /** The rules the stored bits are of (`stream_membership`), null when none are. */
    private tableKey: string | null,
    /** Where the store keeps extra fields the rules read (field-columns.ts). */
    private readonly columnOf: FieldColumnOf,
  ) {}

  /** The rules beyond which membership is not kept (a BIGINT's bits, Default's one of them). */
  static readonly MAX_RULES = 62;

  static async open(writer: DuckDBConnection, columnOf: FieldColumnOf): Promise<StreamSets> {
    await writer.run('CREATE TABLE IF NOT EXISTS stream_membership (rules_key VARCHAR NOT NULL)');
    const key = (
      await writer.runAndReadAll('SELECT rules_key FROM stream_membership LIMIT 1')
    ).getRows()[0]?.[0];
    return new StreamSets(typeof key === 'string' ? key : null, columnOf);
  }

  /**
   * The bits of one event, when the rules held are those of the stored bits; null otherwise
   * (the event is written with the others when the rules held are).
   */
  of(normalised: NormalisedEvent, storedAt: number): bigint | null {
    if (!this.rules || this.rules.key !== this.tableKey) {
      this.unwritten = true;
      return null;
    }
    let bits = 0n;
    const { tests, ownBits, unclaimed, storedAtRead } = this.rules;
    // The event as stored: `stored_at` is the store's, given as it is appended.
    const event: EventLike = storedAtRead ? { ...normalised, stored_at: storedAt } : normalised;
    for (let i = 0; i < tests.length; i++)
      if ((tests[i] as (e: EventLike) => boolean)(event)) bits |= ownBits[i] as bigint;
    return bits === 0n ? unclaimed : bits;
  }

  /**
   * Takes the streams' rules. Scopes are read by their filters until `begin`, `writePart`
   * and `finish` have written the rules' bits over the stored events. False when there are
   * too many rules to keep membership of.
   */
  use(rules: StreamRules): boolean {
    if (rules.streams.length > StreamSets.MAX_RULES) {
      this.rules = null;
      return false;
    }
    if (this.rules?.key === rules.key) return true;
    this.rules = {
      key: rules.key,
      bits: new Map(rules.streams.map((s, i) => [s.id, 1n << BigInt(i)])),
      ownBits: rules.streams.map((_, i) => 1n << BigInt(i)),
      unclaimed: 1n << BigInt(rules.streams.length),
      tests: rules.streams.map((s) => compilePredicate(s.filter)),
      storedAtRead: rules.streams.some((s) => readsField(s.filter, 'stored_at')),
      source: rules,
    };
    return true;
  }

  /**
   * Writes again the bits of the events `evIds` names within `range`, whose `field` was
   * changed in place (re-mining's `pattern_id`), when a rule of the stored bits reads it.
   */
  async rewrite(writer: DuckDBConnection, field: string, range: TimeWindow, evIds: DuckDBListValue) {
    const rules = this.rules?.source;
    if (!rules || this.tableKey !== rules.key || !rules.streams.some((s) => readsField(s.filter, field)))
      return;
    const params = new SqlParams(undefined, this.columnOf);
    const value = bitsSql(rules, params);
    const from = params.add(sqlTime(range.fromMs));
    const to = params.add(sqlTime(range.toMs));
    const prepared = await writer.prepare(
      `UPDATE events SET streams = ${value} WHERE ts >= ${from} AND ts < ${to} AND list_contains($${params.values.length + 1}::VARCHAR[], ev_id)`,
    );
    try {
      prepared.bind([...params.values.map(duckDbValue), evIds]);
      await prepared.run();
    } finally {
      prepared.destroySync();
    }
  }

  /**
   * The bits of rows read from elsewhere (the cold tier's files), in SQL: under the rules
   * the store holds, evaluated as the rows are read; NULL when it holds none (scopes are
   * then read by their filters).
   */
  bitsOfRows(params: SqlParams): string {
    return this.rules ? bitsSql(this.rules.source, params) : 'CAST(NULL AS BIGINT)';
  }

  /** Whether the stored events hold other rules' bits: `begin` and `writePart` come first. */
  stale(rules: StreamRules): boolean {
    return this.tableKey !== rules.key;
  }

  /**
   * Starts writing new rules' bits over the stored events: the table's key goes first, so
   * a write cut short (a crash) is started again, never taken for done. False when other
   * rules came since (theirs are written). Each step runs between appends (the store's
   * append queue), none appended half way; appends in between get their bits in `finish`.
   */
  async begin(writer: DuckDBConnection, rules: StreamRules): Promise<boolean> {
    if (this.rules?.key !== rules.key) return false;
    await writer.run('DELETE FROM stream_membership');
    this.tableKey = null;
    this.unwritten = true;
    return true;
  }

  /** Writes the rules' bits over the stored events with `ts` in `range`. */
  async writePart(writer: DuckDBConnection, rules: StreamRules, range: TimeWindow): Promise<boolean> {
    if (this.rules?.key !== rules.key) return false;
    const params = new SqlParams(undefined, this.columnOf);
    const value = bitsSql(rules, params);
    const from = params.add(sqlTime(range.fromMs));
    const to = params.add(sqlTime(range.toMs));
    await run(writer, `UPDATE events SET streams = ${value} WHERE ts >= ${from} AND ts < ${to}`, params);
    return true;
  }

  /**
   * Writes the bits of the stored events that have none (appended while the rules were
   * being written, or before the store held them), with the rules' key, in one transaction.
   */
  async finish(writer: DuckDBConnection, rules: StreamRules): Promise<void> {
    if (this.rules?.key !== rules.key || (this.tableKey === rules.key && !this.unwritten)) return;
    const params = new SqlParams(undefined, this.columnOf);
    const value = bitsSql(rules, params);
    await writer.run('BEGIN TRANSACTION');
    try {
      await run(writer, `UPDATE events SET streams = ${value} WHERE streams IS NULL`, params);
      await writer.run('DELETE FROM stream_membership');
      await writer.run('INSERT INTO stream_membership VALUES ($1)', [rules.key]);
      await writer.run('COMMIT');
    } catch (err) {
      await writer.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
    this.tableKey = rules.key;
    this.unwritten = false;
  }

  /**
   * The bits a scope reads (an event is in it when it has one of them), when every stored
   * event holds those of the rules the scope was made under; undefined when the scope must
   * be read by its filter.
   */
  read(scope: ReadScope): bigint | undefined {
    const s = scope.streams;
    if (!s || this.unwritten || !this.rules || this.rules.key !== s.rules || this.tableKey !== s.rules)
      return undefined;
    let readable = s.unclaimed ? this.rules.unclaimed : 0n;
    for (const id of s.ids) {
      const bit = this.rules.bits.get(id);
      if (bit === undefined) return undefined;
      readable |= bit;
    }
    return readable;
  }
}

function readsField(f: FilterNode, field: string): boolean {
  switch (f.kind) {
    case 'and':
    case 'or':
      return f.items.some((i) => readsField(i, field));
    case 'not':
      return readsField(f.item, field);
    case 'cond':
      return f.field === field;
    default:
      return false;
  }
}

/** An event's bits under `rules`, in SQL: the rules' compiled filters, held equal to `of`. */
function bitsSql(rules: StreamRules, params: SqlParams): string {
  const unclaimed = 1n << BigInt(rules.streams.length);
  if (rules.streams.length === 0) return `CAST(${unclaimed} AS BIGINT)`;
  const bits = rules.streams.map(
    (s, i) => `CASE WHEN (${compileFilter(s.filter, params)}) THEN ${1n << BigInt(i)} ELSE 0 END`,
  );
  return `coalesce(nullif(CAST(${bits.join(' + ')} AS BIGINT), 0), ${unclaimed})`;
}

async function run(writer: DuckDBConnection, sql: string, params: SqlParams): Promise<void> {
  const prepared = await writer.prepare(sql);
  try {
    if (params.values.length) prepared.bind(params.values.map(duckDbValue));
    await prepared.run();
  } finally {
    prepared.destroySync();
  }
}
