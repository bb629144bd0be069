import { createRequire } from 'node:module';
import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import {
  EVENT_SCHEMA,
  type EventColumn,
  type NormalisedEvent,
  type StoredColumn,
  type StoredEvent,
  type StoredType,
} from '../../core/event.js';
import { setOwn } from '../../core/record-shape.js';
import { isSqlTime, quoteIdent, type SqlValue } from '../sql/sql-params.js';
import { DuckDBMapValue, DuckDBTimestampValue } from './duckdb-api.js';

/**
 * node-api 1.5.5-r.5 decodes every VARCHAR it reads with `new TextDecoder()`, which drops
 * a leading U+FEFF: a message or field starting with a byte-order mark came back without
 * it (found by the cross-check with ClickHouse). Its decoder is a module binding that is
 * read on every call, so one that keeps the mark replaces it. The store contract test
 * reads such values back.
 */
const accessors = createRequire(import.meta.url)('@duckdb/node-api/lib/vectors/dataAccessors.js') as {
  textDecoder: InstanceType<typeof TextDecoder>;
};
if (!(accessors.textDecoder instanceof TextDecoder))
  throw new Error('@duckdb/node-api changed: its VARCHAR decoder is not where the store expects it');
accessors.textDecoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * The event schema (core/event.ts) in DuckDB's terms: the table, the column types the
 * filter compiler relies on, the appender's values and the rows read back. Nothing here
 * names a column: every column is handled by its stored type.
 */

export type DuckDbType = 'VARCHAR' | 'TIMESTAMP' | 'INTEGER' | 'BIGINT' | 'MAP(VARCHAR, VARCHAR)';

const DUCKDB_TYPES: Readonly<Record<StoredType, DuckDbType>> = {
  text: 'VARCHAR',
  ip: 'VARCHAR',
  time: 'TIMESTAMP',
  int32: 'INTEGER',
  int64: 'BIGINT',
  map: 'MAP(VARCHAR, VARCHAR)',
};

// Long free text in ZSTD instead of DuckDB's choice (FSST): ~28 % fewer bytes for messages of
// ~150 bytes, for ~15 % more CPU when a scan decompresses them (ADR 0033). A store's file
// must be written in DuckDB's newest storage format for it (duckdb-event-store.ts).
const columnDdl = (c: StoredColumn) =>
  `${quoteIdent(c.name)} ${DUCKDB_TYPES[c.type]}${c.notNull ? ' NOT NULL' : ''}${'prose' in c ? ' USING COMPRESSION zstd' : ''}`;

/** The events table. Tables made before `intake` and `shape` get them added at the end. */
export const CREATE_EVENTS = `CREATE TABLE IF NOT EXISTS events (\n  ${EVENT_SCHEMA.map(columnDdl).join(',\n  ')}\n)`;

/** What the filter compiler relies on about each queryable column (a test compares it with the table). */
export const EVENT_COLUMN_SQL = Object.fromEntries(
  EVENT_SCHEMA.filter((c) => c.type !== 'map' && !('internal' in c)).map((c) => [
    c.name,
    { type: DUCKDB_TYPES[c.type], notNull: c.notNull },
  ]),
) as Readonly<Record<EventColumn, { type: Exclude<DuckDbType, 'MAP(VARCHAR, VARCHAR)'>; notNull: boolean }>>;

export const tsValue = (ms: number) => new DuckDBTimestampValue(BigInt(Math.round(ms)) * 1000n);
export const fromTs = (v: unknown): number => Number((v as DuckDBTimestampValue).micros / 1000n);

/** A bound value as DuckDB takes it: times as TIMESTAMPs, ±infinity beyond DuckDB's range. */
export function duckDbValue(v: SqlValue | DuckDBValue): DuckDBValue {
  if (!isSqlTime(v)) return v as DuckDBValue;
  const ms = v.time;
  if (ms === Number.POSITIVE_INFINITY) return DuckDBTimestampValue.PosInf;
  if (ms === Number.NEGATIVE_INFINITY) return DuckDBTimestampValue.NegInf;
  const micros = BigInt(Math.round(ms)) * 1000n;
  if (micros > DuckDBTimestampValue.Max.micros) return DuckDBTimestampValue.PosInf;
  if (micros < DuckDBTimestampValue.Min.micros) return DuckDBTimestampValue.NegInf;
  return new DuckDBTimestampValue(micros);
}

type SchemaEntry = (typeof EVENT_SCHEMA)[number];

/**
 * Each event's stream membership (stream-sets.ts): the column after the schema's (then
 * only extra fields' own columns, field-columns.ts).
 */
export const MEMBERSHIP_COLUMN = 'streams';

/** The table's columns: the event schema's, in the appender's order, then the store's own. */
export interface TableOrder {
  /** The schema in the table's column order (a table made by an older version has `intake` and `shape` last). */
  readonly schema: readonly SchemaEntry[];
  /** After stream membership: the columns holding extra fields of their own (field-columns.ts). */
  readonly extras: readonly string[];
}

/**
 * The table's columns in order, which is the appender's. Fails when the table and the
 * schema disagree, rather than appending values into the wrong columns.
 */
export async function tableOrder(conn: DuckDBConnection): Promise<TableOrder> {
  const reader = await conn.runAndReadAll(
    `SELECT column_name FROM information_schema.columns WHERE table_name = 'events' ORDER BY ordinal_position`,
  );
  const all = reader.getRowObjects().map((r) => String(r.column_name));
  // Stream membership (stream-sets.ts) is the store's own, after the schema's columns.
  const membership = all.indexOf(MEMBERSHIP_COLUMN);
  if (membership < 0) throw new Error(`the events table has no ${MEMBERSHIP_COLUMN} column`);
  const names = all.slice(0, membership);
  const byName = new Map<string, SchemaEntry>(EVENT_SCHEMA.map((c) => [c.name, c]));
  const order = names.map((n) => byName.get(n));
  if (order.length !== EVENT_SCHEMA.length || order.some((c) => c === undefined)) {
    throw new Error(`the events table's columns (${names.join(', ')}) are not the event schema's`);
  }
  return { schema: order as SchemaEntry[], extras: all.slice(membership + 1) };
}

/**
 * Fills `cols` (one array per schema column, in `order`) with the values of `rows`:
 * column by column, so each loop converts one type. `stored_at` is the store's. An extra
 * field with a column of its own (`extras`: field → that column's array) goes there
 * instead of into the `fields` map.
 */
export function appendValues(
  order: readonly SchemaEntry[],
  rows: readonly NormalisedEvent[],
  storedAt: DuckDBTimestampValue,
  cols: DuckDBValue[][],
  extras: ReadonlyMap<string, DuckDBValue[]>,
): void {
  const n = rows.length;
  for (let p = 0; p < order.length; p++) {
    const c = order[p] as SchemaEntry;
    const col = cols[p] as DuckDBValue[];
    if (c.name === 'stored_at') {
      col.fill(storedAt, 0, n);
      continue;
    }
    const name = c.name as Exclude<SchemaEntry['name'], 'stored_at'>;
    switch (c.type) {
      case 'time':
        for (let i = 0; i < n; i++) col[i] = tsValue((rows[i] as NormalisedEvent)[name] as number);
        break;
      case 'int64':
        for (let i = 0; i < n; i++) {
          const v = (rows[i] as NormalisedEvent)[name] as number | null;
          col[i] = v === null ? null : BigInt(v);
        }
        break;
      case 'map':
        for (const own of extras.values()) own.fill(null, 0, n);
        for (let i = 0; i < n; i++) {
          const fields = (rows[i] as NormalisedEvent)[name] as Record<string, string>;
          const entries = [];
          for (const key in fields) {
            const own = extras.get(key);
            if (own) own[i] = fields[key] as string;
            else entries.push({ key, value: fields[key] as string });
          }
          col[i] = new DuckDBMapValue(entries);
        }
        break;
      default:
        for (let i = 0; i < n; i++)
          col[i] = ((rows[i] as NormalisedEvent)[name] ?? null) as string | number | null;
    }
  }
}

/**
 * A row of `SELECT *` as the event it holds; `extras` names the extra field each column
 * after the schema's holds (field-columns.ts), whose values join the `fields` map's.
 */
export function rowToEvent(
  row: Record<string, DuckDBValue>,
  extras: ReadonlyArray<readonly [column: string, field: string]> = [],
): StoredEvent {
  const event: Record<string, unknown> = {};
  for (const c of EVENT_SCHEMA) {
    const v = row[c.name];
    if (v === null || v === undefined) {
      event[c.name] = c.type === 'map' ? {} : null;
      continue;
    }
    switch (c.type) {
      case 'time':
        event[c.name] = fromTs(v);
        break;
      case 'int32':
      case 'int64':
        event[c.name] = Number(v);
        break;
      case 'map': {
        const fields: Record<string, string> = {};
        for (const { key, value } of (v as DuckDBMapValue).entries)
          setOwn(fields, String(key), String(value));
        event[c.name] = fields;
        break;
      }
      default:
        event[c.name] = String(v);
    }
  }
  for (const [column, field] of extras) {
    const v = row[column];
    if (v !== null && v !== undefined) setOwn(event.fields as Record<string, string>, field, String(v));
  }
  return event as unknown as StoredEvent;
}

/**
 * Tables made before `intake` and `shape` existed (where an event came
 * in from `source` to `intake`), or before `pattern_id`: the columns are added at the end,
 * where the appender expects them, and the old `source` values move to `intake`.
 */
export async function upgradeEventsTable(writer: DuckDBConnection): Promise<void> {
  const reader = await writer.runAndReadAll(
    `SELECT column_name FROM information_schema.columns WHERE table_name = 'events'`,
  );
  const columns = new Set(reader.getRowObjects().map((r) => String(r.column_name)));
  if (!columns.has('intake')) await addIntakeAndShape(writer);
  // Tables made before patterns: the column at the end; earlier events have none.
  if (!columns.has('pattern_id')) await writer.run('ALTER TABLE events ADD COLUMN pattern_id VARCHAR');
  // Every table: stream membership, after the schema's columns (stream-sets.ts); NULL until written.
  if (!columns.has(MEMBERSHIP_COLUMN))
    await writer.run(`ALTER TABLE events ADD COLUMN ${MEMBERSHIP_COLUMN} BIGINT`);
}

async function addIntakeAndShape(writer: DuckDBConnection): Promise<void> {
  await writer.run('BEGIN TRANSACTION');
  try {
    await writer.run('ALTER TABLE events ADD COLUMN intake VARCHAR');
    await writer.run('ALTER TABLE events ADD COLUMN shape VARCHAR');
    await writer.run('UPDATE events SET intake = source, source = NULL');
    await writer.run('COMMIT');
  } catch (err) {
    await writer.run('ROLLBACK');
    throw err;
  }
}
