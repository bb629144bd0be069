/**
 * The shape of a record as its sender wrote it ("`raw` reproduces the record
 * as sent: its key names, nesting and JSON types"), kept beside the event so that `raw`
 * is rebuilt from the stored columns and fields instead of storing the record twice
 * (docs/adr/0003-record-shape.md).
 *
 * Normalisation (ingest/normalise.ts) renames keys (`@timestamp` → `ts`, `MESSAGE` →
 * `message`, a sender's `ev_id` → `orig.ev_id`), flattens nesting to dotted names, turns
 * values into column types (severity `WARN` → `warning`, port `"22"` → 22) and fields
 * into text. The shape records only what that lost, so most records need a few bytes:
 *
 * - `k`: stored name (column, or a field Logscope renamed) → the flat key as sent, where
 *   they differ;
 * - `v`: column → the value as sent, where the stored value's canonical form differs
 *   (for `ts` the canonical form is the ISO 8601 UTC string `toISOString` gives);
 * - `t`: field → its JSON type where it is not a string (`n` number, `b` boolean,
 *   `j` array, kept as its JSON text);
 * - `p`: flat key as sent → its path, where a key itself held a dot (`{"a.b": 1}`);
 * - `z`: flat key as sent → `null` or `{}`, values that flattening drops;
 * - `o`: fields Logscope added (left out of `raw`); `d`: columns Logscope derived from a
 *   field that stays (left out of `raw`); `nt`: the record had no time (`ts` is the
 *   receive time); `ls`: the message had one leading space, which is not stored; `tu`:
 *   the time was sent as an epoch number in seconds (`s`) or milliseconds (`ms`) that
 *   the stored time gives back exactly.
 *
 * Events without a shape (stored before shapes existed, or made by hand) rebuild under
 * the canonical names with text field values.
 */
import { EVENT_COLUMNS, type EventColumn, type NormalisedEvent } from './event.js';

export type JsonType = 'n' | 'b' | 'j';

export interface RecordShape {
  k?: Record<string, string>;
  v?: Record<string, unknown>;
  t?: Record<string, JsonType>;
  p?: Record<string, string[]>;
  z?: Record<string, null | Record<string, never>>;
  o?: string[];
  d?: string[];
  nt?: 1;
  ls?: 1;
  tu?: 's' | 'ms';
}

/** The shape as stored; null when empty (the canonical rebuild is the record). */
export function encodeShape(shape: RecordShape): string | null {
  for (const _ in shape) return JSON.stringify(shape);
  return null;
}

/** Parsed shapes of recent events: a page of events repeats a handful of shapes. */
const cache = new Map<string, RecordShape>();

export function decodeShape(text: string | null | undefined): RecordShape {
  if (!text) return {};
  let shape = cache.get(text);
  if (shape === undefined) {
    try {
      shape = JSON.parse(text) as RecordShape;
    } catch {
      shape = {};
    }
    if (cache.size >= 1024) cache.clear();
    cache.set(text, shape);
  }
  return shape;
}

/** A field's text as the JSON value it was sent as. */
export function typedValue(text: string, type: JsonType | undefined): unknown {
  switch (type) {
    case undefined:
      return text;
    case 'n': {
      const n = Number(text);
      return Number.isFinite(n) ? n : text;
    }
    case 'b':
      return text === 'true';
    case 'j':
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    default:
      return type satisfies never;
  }
}

/**
 * The event's fields with their JSON types (a number stays a number), for
 * event representations. Returns `fields` itself when every field is a string.
 */
export function typedFields(
  fields: Readonly<Record<string, string>>,
  shapeText: string | null | undefined,
): Record<string, unknown> {
  const types = shapeText ? decodeShape(shapeText).t : undefined;
  if (types === undefined) return fields as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    const type = Object.hasOwn(types, key) ? types[key] : undefined;
    setOwn(out, key, typedValue(fields[key] as string, type));
  }
  return out;
}

/** Columns Logscope fills itself: never part of what a sender wrote. */
const OURS = new Set<EventColumn>(['ev_id', 'ts', 'received_at', 'stored_at', 'intake', 'pattern_id']);

/** Columns a record can fill, in the order `rebuildRecord` writes them after `ts`. */
const RAW_COLUMNS = EVENT_COLUMNS.filter(
  (c): c is Exclude<EventColumn, 'ev_id' | 'ts' | 'received_at' | 'stored_at' | 'intake' | 'pattern_id'> =>
    !OURS.has(c),
);

const COLUMN_NAMES = new Set<string>(['ts', ...RAW_COLUMNS]);

/**
 * Rebuilds the record as sent: its key names, nesting and JSON types; only
 * key order and whitespace may differ. Known limits: a message cut at the size limit
 * comes back cut (with `_truncated`), and of two keys that flatten to one name only the
 * first was kept.
 */
export function rebuildRecord(event: NormalisedEvent): Record<string, unknown> {
  const shape = decodeShape(event.shape);
  const k = shape.k ?? {};
  const v = shape.v ?? {};
  const t = shape.t ?? {};
  const omitted = new Set([...(shape.o ?? []), ...(shape.d ?? [])]);
  const entries: [string, unknown][] = [];
  const keyOf = (name: string) => (Object.hasOwn(k, name) ? (k[name] as string) : name);
  if (!shape.nt) {
    const time = shape.tu === 's' ? event.ts / 1000 : shape.tu === 'ms' ? event.ts : isoOrNumber(event.ts);
    entries.push([keyOf('ts'), Object.hasOwn(v, 'ts') ? v.ts : time]);
  }
  for (const column of RAW_COLUMNS) {
    const value = event[column];
    if (value === null || omitted.has(column)) continue;
    const stored = column === 'message' && shape.ls ? ` ${value}` : value;
    entries.push([keyOf(column), Object.hasOwn(v, column) ? v[column] : stored]);
  }
  for (const key of Object.keys(event.fields)) {
    if (omitted.has(key)) continue;
    const type = Object.hasOwn(t, key) ? t[key] : undefined;
    // A field may carry a column's name (a value the column could not take): `k` renames
    // columns, so such a field keeps its name; renamed fields never have a column's name.
    const sent = COLUMN_NAMES.has(key) ? key : keyOf(key);
    entries.push([sent, typedValue(event.fields[key] as string, type)]);
  }
  for (const [key, value] of Object.entries(shape.z ?? {})) entries.push([key, value === null ? null : {}]);

  const raw: Record<string, unknown> = {};
  const p = shape.p ?? {};
  // Plain keys first, so that a nested path can never displace a value already placed.
  const nested: [string[], string, unknown][] = [];
  for (const [key, value] of entries) {
    const path = Object.hasOwn(p, key) ? (p[key] as string[]) : key.split('.');
    if (path.length === 1) {
      if (!Object.hasOwn(raw, key)) setOwn(raw, key, value);
    } else nested.push([path, key, value]);
  }
  for (const [path, key, value] of nested) insertPath(raw, path, key, value);
  return raw;
}

function isoOrNumber(ms: number): string | number {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? ms : date.toISOString();
}

function insertPath(root: Record<string, unknown>, path: string[], key: string, value: unknown): void {
  let node = root;
  for (let i = 0; i < path.length - 1; i++) {
    const segment = path[i] as string;
    if (!Object.hasOwn(node, segment)) setOwn(node, segment, {});
    const next = node[segment];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) {
      // A value already sits where the path goes (only in events normalisation did not make).
      if (!Object.hasOwn(root, key)) setOwn(root, key, value);
      return;
    }
    node = next as Record<string, unknown>;
  }
  const last = path[path.length - 1] as string;
  if (!Object.hasOwn(node, last)) setOwn(node, last, value);
  else if (!Object.hasOwn(root, key)) setOwn(root, key, value);
}

/**
 * Sets an own property: assignment for every key but `__proto__`, whose assignment would
 * run Object.prototype's setter (that one is defined; a definition costs more, and rows
 * read back set every field through here).
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
