import {
  EVENT_SCHEMA,
  type NormalisedEvent,
  type StoredColumn,
  type StoredEvent,
  type StoredType,
} from '../../core/event.js';
import { setOwn } from '../../core/record-shape.js';
import { quoteIdent } from '../sql/sql-params.js';

/**
 * The event schema (core/event.ts) in ClickHouse's terms, for every server from 18.16
 * on: times are Int64 Unix milliseconds (18.16 has no DateTime64), the extra fields a
 * `Nested(key, value)` column (no `Map` before 21.8), nullable columns `Nullable`.
 * Nothing here names a column: every column is handled by its stored type.
 */

const CLICKHOUSE_TYPES: Readonly<Record<StoredType, string>> = {
  text: 'String',
  ip: 'String',
  time: 'Int64',
  int32: 'Int32',
  int64: 'Int64',
  map: 'Nested(key String, value String)',
};

const columnDdl = (c: StoredColumn) => {
  const type = CLICKHOUSE_TYPES[c.type];
  return `${quoteIdent(c.name)} ${c.notNull || c.type === 'map' ? type : `Nullable(${type})`}`;
};

export const DAY_MS = 86_400_000;

/**
 * The table holding the events on one server: one partition per UTC day (retention drops
 * whole partitions), sorted by time for range scans.
 */
export const createLocalTable = (database: string, table: string) =>
  `CREATE TABLE IF NOT EXISTS ${quoteIdent(database)}.${quoteIdent(table)} (\n  ${EVENT_SCHEMA.map(columnDdl).join(',\n  ')}\n) ENGINE = MergeTree PARTITION BY intDiv("ts", ${DAY_MS}) ORDER BY ("ts", "ev_id")`;

/** The table spreading rows over the cluster's shards (by event id) and reading them all. */
export const createDistributedTable = (database: string, table: string, cluster: string, local: string) =>
  `CREATE TABLE IF NOT EXISTS ${quoteIdent(database)}.${quoteIdent(table)} AS ${quoteIdent(database)}.${quoteIdent(local)} ENGINE = Distributed(${quoteIdent(cluster)}, ${quoteIdent(database)}, ${quoteIdent(local)}, cityHash64("ev_id"))`;

type SchemaEntry = (typeof EVENT_SCHEMA)[number];

/** Columns added since the first release, which tables made before them lack (in schema order). */
export const LATER_COLUMNS: readonly string[] = ['pattern_id'];

/** The statement adding a later column (ClickHouse 18 has no `ADD COLUMN IF NOT EXISTS`). */
export const addColumnSql = (database: string, table: string, name: string) =>
  `ALTER TABLE ${quoteIdent(database)}.${quoteIdent(table)} ADD COLUMN ${columnDdl(
    EVENT_SCHEMA.find((x) => x.name === name) as StoredColumn,
  )}`;

/** One event as a JSONEachRow object for the table (the map as its two arrays). */
export function insertRow(event: NormalisedEvent, storedAt: number): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const c of EVENT_SCHEMA) {
    if (c.name === 'stored_at') {
      row[c.name] = storedAt;
      continue;
    }
    const v = event[c.name as Exclude<SchemaEntry['name'], 'stored_at'>];
    switch (c.type) {
      case 'map': {
        const fields = v as Record<string, string>;
        const keys: string[] = [];
        const values: string[] = [];
        for (const key in fields) {
          keys.push(key);
          values.push(fields[key] as string);
        }
        row[`${c.name}.key`] = keys;
        row[`${c.name}.value`] = values;
        break;
      }
      case 'time':
        row[c.name] = Math.round(v as number);
        break;
      default:
        row[c.name] = v;
    }
  }
  return row;
}

const KEYS = EVENT_SCHEMA.map((c) =>
  c.type === 'map'
    ? [JSON.stringify(`${c.name}.key`), JSON.stringify(`${c.name}.value`)]
    : [JSON.stringify(c.name)],
);

/**
 * A text as JSON, its lone surrogates as U+FFFD: JSON.stringify writes one as `\ud800`,
 * which ClickHouse's parser refuses (the whole insert failed, a 500 for a message of binary
 * garbage), and DuckDB's encoder stores U+FFFD for it: both stores now hold the same.
 * (`toWellFormed` is ES2024, in Node 20; the ES2023 lib does not declare it.)
 */
const jsonText = (s: string) => JSON.stringify((s as string & { toWellFormed(): string }).toWellFormed());

/**
 * Events as a JSONEachRow body for the table: what `JSON.stringify(insertRow(e))` gives,
 * line by line, written straight from the events (no row objects: in the ingest profile
 * building and stringifying them, and collecting them after, took most of the worker's
 * time).
 */
export function jsonEachRow(events: readonly NormalisedEvent[], storedAt: number): string {
  let out = '';
  for (const e of events) {
    let line = '{';
    for (let i = 0; i < EVENT_SCHEMA.length; i++) {
      const c = EVENT_SCHEMA[i] as SchemaEntry;
      const keys = KEYS[i] as string[];
      if (i > 0) line += ',';
      if (c.name === 'stored_at') {
        line += `${keys[0]}:${storedAt}`;
        continue;
      }
      const v = e[c.name as Exclude<SchemaEntry['name'], 'stored_at'>];
      if (c.type === 'map') {
        const fields = v as Record<string, string>;
        let k = '';
        let vals = '';
        for (const key in fields) {
          if (k) {
            k += ',';
            vals += ',';
          }
          k += jsonText(key);
          vals += jsonText(fields[key] as string);
        }
        line += `${keys[0]}:[${k}],${keys[1]}:[${vals}]`;
      } else if (v === null || v === undefined) line += `${keys[0]}:null`;
      else if (c.type === 'time') line += `${keys[0]}:${Math.round(v as number)}`;
      else if (typeof v === 'number') line += `${keys[0]}:${v}`;
      else line += `${keys[0]}:${typeof v === 'string' ? jsonText(v) : JSON.stringify(v)}`;
    }
    out += `${line}}\n`;
  }
  return out;
}

/** A row of `SELECT *` (JSONEachRow, 64-bit integers as text) as the event it holds. */
export function rowToEvent(row: Record<string, unknown>): StoredEvent {
  const event: Record<string, unknown> = {};
  for (const c of EVENT_SCHEMA) {
    if (c.type === 'map') {
      const keys = (row[`${c.name}.key`] ?? []) as string[];
      const values = (row[`${c.name}.value`] ?? []) as string[];
      const fields: Record<string, string> = {};
      keys.forEach((k, i) => {
        // A field named `__proto__` (ingest keeps it as data) is defined, not assigned.
        setOwn(fields, k, values[i] as string);
      });
      event[c.name] = fields;
      continue;
    }
    const v = row[c.name];
    if (v === null || v === undefined) event[c.name] = null;
    else if (c.type === 'time' || c.type === 'int32' || c.type === 'int64') event[c.name] = Number(v);
    else event[c.name] = String(v);
  }
  return event as unknown as StoredEvent;
}
