/**
 * The event schema shared by ingest, the event stores and the query layer
 * (docs/architecture.md). Times are Unix milliseconds inside the process;
 * representations turn them into Unix seconds with millisecond precision.
 */

/**
 * How a stored column holds its values. Each event store maps these to its own types
 * (DuckDB: VARCHAR, TIMESTAMP, INTEGER, BIGINT, MAP).
 */
export type StoredType = 'text' | 'ip' | 'time' | 'int32' | 'int64' | 'map';

export interface StoredColumn {
  readonly name: string;
  readonly type: StoredType;
  readonly notNull: boolean;
  /** Kept for the store's own use (rebuilding `raw`), not a field queries address. */
  readonly internal?: true;
  /**
   * Long free text (the message): a store that can compresses it with a general-purpose
   * compressor rather than one for short, repeated values (ADR 0033).
   */
  readonly prose?: true;
}

/**
 * The event schema, declared once: the stores' tables, appends and row decoding, the
 * filter compiler's column types and the query layer's field kinds are derived from it
 * (`StoredEvent` below is its TypeScript shape; a test holds the two to the same names).
 * Times are Unix ms in the process; `fields` holds every other field, flattened.
 */
export const EVENT_SCHEMA = [
  { name: 'ev_id', type: 'text', notNull: true },
  { name: 'ts', type: 'time', notNull: true },
  { name: 'received_at', type: 'time', notNull: true },
  { name: 'stored_at', type: 'time', notNull: true },
  { name: 'host', type: 'text', notNull: false },
  { name: 'app', type: 'text', notNull: false },
  { name: 'severity', type: 'text', notNull: false },
  { name: 'facility', type: 'text', notNull: false },
  { name: 'message', type: 'text', notNull: false, prose: true },
  { name: 'src_ip', type: 'ip', notNull: false },
  { name: 'src_port', type: 'int32', notNull: false },
  { name: 'dst_ip', type: 'ip', notNull: false },
  { name: 'dst_port', type: 'int32', notNull: false },
  { name: 'user', type: 'text', notNull: false },
  { name: 'action', type: 'text', notNull: false },
  { name: 'status', type: 'int32', notNull: false },
  { name: 'bytes', type: 'int64', notNull: false },
  { name: 'source', type: 'text', notNull: false },
  { name: 'intake', type: 'text', notNull: false },
  { name: 'fields', type: 'map', notNull: false },
  { name: 'shape', type: 'text', notNull: false, internal: true },
  // The message's template (docs/api/patterns.md), assigned at ingest after pipelines; last, where
  // stores made before it add it.
  { name: 'pattern_id', type: 'text', notNull: false },
] as const satisfies readonly StoredColumn[];

type SchemaEntry = (typeof EVENT_SCHEMA)[number];

type ColumnEntry = Extract<SchemaEntry, { type: Exclude<StoredType, 'map'>; internal?: undefined }>;

/** A column queries address by name (everything but the `fields` map and internal ones). */
export type EventColumn = ColumnEntry['name'];

export type FieldKind = 'string' | 'integer' | 'time' | 'ip';

const KIND_OF_TYPE: Record<Exclude<StoredType, 'map'>, FieldKind> = {
  text: 'string',
  ip: 'ip',
  time: 'time',
  int32: 'integer',
  int64: 'integer',
};

const isEventColumn = (c: SchemaEntry): c is ColumnEntry => c.type !== 'map' && !('internal' in c);

/** Columns every store keeps as real columns, in schema order; everything else lives in `fields`. */
export const EVENT_COLUMNS: readonly EventColumn[] = EVENT_SCHEMA.filter(isEventColumn).map((c) => c.name);

/** The type of each column, which decides how filters compare values. */
export const COLUMN_KINDS: Readonly<Record<EventColumn, FieldKind>> = Object.fromEntries(
  EVENT_SCHEMA.filter(isEventColumn).map((c) => [c.name, KIND_OF_TYPE[c.type]]),
) as Record<EventColumn, FieldKind>;

export const SEVERITIES = [
  'emergency',
  'alert',
  'critical',
  'error',
  'warning',
  'notice',
  'info',
  'debug',
] as const;
export type Severity = (typeof SEVERITIES)[number];

/**
 * Names and aliases of severities, lower case: what ingest reads from a record
 * (ingest/normalise.ts parseSeverity) and what a filter value may name.
 */
export const SEVERITY_ALIASES: Readonly<Record<string, Severity>> = {
  emerg: 'emergency',
  emergency: 'emergency',
  panic: 'emergency',
  alert: 'alert',
  crit: 'critical',
  critical: 'critical',
  fatal: 'critical',
  err: 'error',
  error: 'error',
  warn: 'warning',
  warning: 'warning',
  notice: 'notice',
  info: 'info',
  information: 'info',
  informational: 'info',
  debug: 'debug',
  trace: 'debug',
};

/** An event as produced by ingest, before the store assigns `stored_at`. */
export interface NormalisedEvent {
  ev_id: string;
  /** Event time, Unix ms. */
  ts: number;
  /** Receive time, Unix ms. */
  received_at: number;
  host: string | null;
  app: string | null;
  severity: Severity | null;
  facility: string | null;
  message: string | null;
  src_ip: string | null;
  src_port: number | null;
  dst_ip: string | null;
  dst_port: number | null;
  user: string | null;
  action: string | null;
  status: number | null;
  bytes: number | null;
  /** The sender's own `source`; null when the record had none. */
  source: string | null;
  /** Where the event came in: `http:<user>`, `es:<user>`, `syslog:<address>`. */
  intake: string | null;
  /** Every other field, flattened to dotted names, values as text. */
  fields: Record<string, string>;
  /**
   * How to rebuild the record as sent from the columns and fields (key names, JSON
   * types, nesting; see ingest/record-shape.ts), as compact JSON; null when the
   * canonical rebuild already is the record.
   */
  shape: string | null;
  /** The message's template (ingest/patterns), null until mined or with mining off. */
  pattern_id: string | null;
}

/**
 * An event with every column empty (null, no fields) but its id and times: the one place
 * code and tests spell out a whole event, so a new column is added here once.
 */
export function emptyEvent(
  base: Pick<NormalisedEvent, 'ev_id' | 'ts' | 'received_at'> & Partial<NormalisedEvent>,
): NormalisedEvent {
  return {
    host: null,
    app: null,
    severity: null,
    facility: null,
    message: null,
    src_ip: null,
    src_port: null,
    dst_ip: null,
    dst_port: null,
    user: null,
    action: null,
    status: null,
    bytes: null,
    source: null,
    intake: null,
    fields: {},
    shape: null,
    pattern_id: null,
    ...base,
  };
}

/** An event as read back from a store. */
export interface StoredEvent extends NormalisedEvent {
  /** When it became durable and queryable, Unix ms. */
  stored_at: number;
}
