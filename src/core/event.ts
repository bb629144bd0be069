/**
 * The event schema shared by ingest, the event stores and the query layer
 * ("Architecture" in the README). Times are Unix milliseconds inside the process;
 * representations turn them into Unix seconds with millisecond precision.
 */

/** Columns every store keeps as real columns; everything else lives in `fields`. */
export const EVENT_COLUMNS = [
  'ev_id',
  'ts',
  'received_at',
  'stored_at',
  'host',
  'app',
  'severity',
  'facility',
  'message',
  'src_ip',
  'src_port',
  'dst_ip',
  'dst_port',
  'user',
  'action',
  'status',
  'bytes',
  'source',
  'intake',
] as const;

export type EventColumn = (typeof EVENT_COLUMNS)[number];

export type FieldKind = 'string' | 'integer' | 'time' | 'ip';

/** The type of each column, which decides how filters compare values. */
export const COLUMN_KINDS: Record<EventColumn, FieldKind> = {
  ev_id: 'string',
  ts: 'time',
  received_at: 'time',
  stored_at: 'time',
  host: 'string',
  app: 'string',
  severity: 'string',
  facility: 'string',
  message: 'string',
  src_ip: 'ip',
  src_port: 'integer',
  dst_ip: 'ip',
  dst_port: 'integer',
  user: 'string',
  action: 'string',
  status: 'integer',
  bytes: 'integer',
  source: 'string',
  intake: 'string',
};

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
}

/** An event as read back from a store. */
export interface StoredEvent extends NormalisedEvent {
  /** When it became durable and queryable, Unix ms. */
  stored_at: number;
}
