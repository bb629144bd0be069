import type { DuckDBConnection } from '@duckdb/node-api';
import type { NormalisedEvent } from '../../core/event.js';
import { quoteIdent } from '../sql/sql-params.js';

/**
 * Extra fields many events carry, each in a VARCHAR column of its own (ADR 0017) instead
 * of an entry in every event's `fields` map: DuckDB compresses a column by its values
 * (dictionary, FSST) where a map is stored as lists of keys and values, reads one column
 * where a map lookup reads both lists, and an append writes one value where a map entry
 * writes a key and a value.
 *
 * The store counts the keys of the events it appends (but those of records with more than
 * `MAX_FIELDS_COUNTED` fields); after `SAMPLE_EVENTS` of them, each
 * key at least `MIN_SHARE` of them carried gets a column (`extra_1`, `extra_2`, … in the
 * table, after the schema's columns; the table `field_columns` names each one's key), up
 * to `MAX` columns, and the counting starts again. From then on an event's value of that
 * key is appended into the column, and events stored before stay as they are: a statement
 * reads such a field as `coalesce(column, map entry)` (the filter compiler's
 * `extraField`), so every answer is what it was. A column is added by a write (the
 * statement gate): a statement is built with the columns its snapshot holds.
 */
export class FieldColumns {
  /** Columns at most: the table stays narrow; the rest stay in the map. */
  static readonly MAX = 32;
  static readonly SAMPLE_EVENTS = 1_000;
  /**
   * Where a statement holds rows (a sort), a column costs every row a slot, a map entry
   * about two on the rows that have it: below half the events a column costs memory.
   */
  static readonly MIN_SHARE = 0.5;
  /**
   * Events with more extra fields than this are not counted: a record of hundreds of
   * fields is a dump more than a log line, and its keys would give columns most other
   * events lack, each costing every row a slot where a statement holds rows (a sort: six
   * CSV reports sorted by host over 200,000 events after 2,000 records of 999 fields
   * peaked at 1,281 MiB with their 32 columns, 1,123-1,136 without).
   */
  static readonly MAX_FIELDS_COUNTED = 32;
  /** Keys counted at most per sample. */
  private static readonly MAX_COUNTED_KEYS = 4_096;

  /** Field → its column, and column → its field; `columns`, the latter as a list. */
  private readonly byKey = new Map<string, string>();
  private readonly byColumn = new Map<string, string>();
  private list: ReadonlyArray<readonly [column: string, field: string]> = [];
  private counts = new Map<string, number>();
  private counted = 0;

  private constructor(rows: ReadonlyArray<readonly [string, string]>) {
    for (const [key, column] of rows) this.remember(key, column);
  }

  static async open(writer: DuckDBConnection): Promise<FieldColumns> {
    await writer.run(
      'CREATE TABLE IF NOT EXISTS field_columns (key VARCHAR PRIMARY KEY, col VARCHAR NOT NULL UNIQUE)',
    );
    const rows = (await writer.runAndReadAll('SELECT key, col FROM field_columns')).getRows();
    return new FieldColumns(rows.map(([k, c]) => [String(k), String(c)] as const));
  }

  private remember(key: string, column: string): void {
    this.byKey.set(key, column);
    this.byColumn.set(column, key);
    this.list = [...this.list, [column, key]];
  }

  /** Each column with the field it holds. */
  get columns(): ReadonlyArray<readonly [column: string, field: string]> {
    return this.list;
  }

  /** The column that holds `field`, when one does. */
  readonly columnOf = (field: string): string | undefined => this.byKey.get(field);

  /** The field a column holds, for a column the table has after the schema's. */
  fieldOf(column: string): string | undefined {
    return this.byColumn.get(column);
  }

  /**
   * Counts the keys of `events`; once a sample is complete, the keys to give columns now
   * (none most of the time).
   */
  due(events: readonly NormalisedEvent[]): string[] {
    if (this.byKey.size >= FieldColumns.MAX) return [];
    const counts = this.counts;
    let counted = 0;
    for (const e of events) {
      if (fieldCount(e.fields) > FieldColumns.MAX_FIELDS_COUNTED) continue;
      counted++;
      for (const key in e.fields) {
        const n = counts.get(key);
        if (n !== undefined) counts.set(key, n + 1);
        else if (counts.size < FieldColumns.MAX_COUNTED_KEYS && !this.byKey.has(key)) counts.set(key, 1);
      }
    }
    this.counted += counted;
    if (this.counted < FieldColumns.SAMPLE_EVENTS) return [];
    const least = this.counted * FieldColumns.MIN_SHARE;
    const keys = [...counts]
      .filter(([, n]) => n >= least)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, FieldColumns.MAX - this.byKey.size)
      .map(([k]) => k);
    this.counts = new Map();
    this.counted = 0;
    return keys;
  }

  /**
   * Gives each of `keys` a column, in one transaction: the table's new columns and their
   * names in `field_columns` together, or neither. Run as a write (no statement planned).
   */
  async add(writer: DuckDBConnection, keys: readonly string[]): Promise<void> {
    const added: Array<[string, string]> = [];
    let next = this.byKey.size + 1;
    await writer.run('BEGIN TRANSACTION');
    try {
      for (const key of keys) {
        const column = `extra_${next++}`;
        await writer.run(`ALTER TABLE events ADD COLUMN ${quoteIdent(column)} VARCHAR`);
        await writer.run('INSERT INTO field_columns VALUES ($1, $2)', [key, column]);
        added.push([key, column]);
      }
      await writer.run('COMMIT');
    } catch (err) {
      await writer.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
    for (const [key, column] of added) this.remember(key, column);
  }
}

/** How many fields `fields` holds, up to one past the most counted. */
function fieldCount(fields: Readonly<Record<string, string>>): number {
  let n = 0;
  for (const _ in fields) if (++n > FieldColumns.MAX_FIELDS_COUNTED) break;
  return n;
}
