/**
 * Record normalisation: one received JSON record becomes one NormalisedEvent.
 * Pure: no I/O, no clock (the receive time and the id generator come from the caller).
 *
 * Decisions worth knowing before reading the code:
 * - The record is flattened first (nested objects → dotted names), then columns are taken
 *   from the flat names. So `{"host": {"name": "x"}}` (Beats) and `{"host.name": "x"}`
 *   are the same record, and `host.name` can be a column alias without special cases.
 * - For each column, the FIRST alias present decides. If its value is unusable (an array
 *   for a string column, "abc" for a port, an unknown severity, an invalid IP), the column
 *   stays null and the value stays in `fields` under its own key, with a note. A record is
 *   never rejected for a bad column value; only for not being an object or for the caps.
 *   The one exception is `ts`: an unparseable value goes to `fields._ts_unparsed` (the
 *   event still needs a time, so the receive time is used and the substitution is marked).
 * - Other aliases of the same column that are also present are not consumed: they stay in
 *   `fields`, so nothing the sender wrote is lost.
 * - Keys are case-sensitive (`Message` is a field, not the message); the upper-case
 *   names of syslog-ng and journald are aliases of their own.
 * - A sender's `source` is the `source` column. Keys that name columns
 *   Logscope fills itself (`ev_id`, `received_at`, `stored_at`, `intake`) become fields
 *   `orig.<name>`: the record cannot forge them, and nothing it sent is lost.
 * - Field values are stored as text; their JSON types, the key names as sent and the
 *   nesting go to the event's shape (core/record-shape.ts), from which representations
 *   take the types back and `raw` is rebuilt.
 */
import type { NormalisedEvent } from '../core/event.js';
import { encodeShape, type JsonType, type RecordShape, setOwn } from '../core/record-shape.js';
import {
  type Leaf,
  MAX_MESSAGE_BYTES,
  parseByteCount,
  parseFacility,
  parseInteger,
  parseIp,
  parsePort,
  parseSeverity,
  parseTimestamp,
  scalarToString,
  truncateUtf8,
} from './column-values.js';
import {
  ALIAS_INDEX,
  type AliasedColumn,
  type Candidates,
  COLUMN_ALIASES,
  FIELD_RENAMES,
  SYSLOG_TAG_RE,
} from './record-aliases.js';

/** A record with more entries in `fields` than this is rejected. */
export const MAX_FIELDS = 1000;
/** A record with a flattened field name longer than this (UTF-16 code units) is rejected. */
export const MAX_FIELD_NAME_LENGTH = 256;

/** Holds the original `ts` value when it could not be read as a time. */
export const TS_UNPARSED_FIELD = '_ts_unparsed';
/** Names the column that was truncated (`message`). */
export const TRUNCATED_FIELD = '_truncated';

export interface NormaliseContext {
  /** Receive time, Unix ms; also the event time when the record has none. */
  receivedAt: number;
  /** Where the records came in (`http:<user>`, `syslog:<address>`): the `intake` column. */
  intake: string | null;
  /** Makes the event id (a ULID); called once per accepted record. */
  newId: () => string;
  /** Fields the intake adds (ParsedEntry.meta): stored unless the record has the key, never in `raw`. */
  meta?: Readonly<Record<string, string>>;
}

export type NormaliseResult =
  | { ok: true; event: NormalisedEvent; notes?: string[] }
  | { ok: false; detail: string };

/** What flattening keeps beside the leaves, for the record's shape. */
interface Flattened {
  leaves: Map<string, Leaf>;
  /** Flat key → path, where a key held a dot itself. */
  paths?: Record<string, string[]>;
  /** Flat key → `null` or `{}`: values flattening drops. */
  empties?: Record<string, null | Record<string, never>>;
  emptyCount?: number;
}

/**
 * Turns one received record into an event. Never throws: a record it cannot accept comes
 * back as `{ok: false, detail}` so the caller rejects that record alone.
 */
export function normaliseRecord(record: unknown, ctx: NormaliseContext): NormaliseResult {
  if (!isPlainObject(record)) {
    return { ok: false, detail: `record must be a JSON object, got ${describeType(record)}` };
  }
  const notes: string[] = [];
  const flat: Flattened = { leaves: new Map() };
  const flattenError = flatten(record, null, [], 0, flat, notes);
  if (flattenError) return { ok: false, detail: flattenError };
  const leaves = flat.leaves;
  const shape: RecordShape = {};

  const candidates: Candidates = {};
  for (const key of leaves.keys()) {
    const alias = ALIAS_INDEX.get(key);
    if (alias === undefined) continue;
    const current = candidates[alias.column];
    if (current === undefined || alias.rank < current.rank)
      candidates[alias.column] = { key, rank: alias.rank };
  }
  const take = <T>(column: AliasedColumn, parse: (value: Leaf) => T | null, problem: string) =>
    takeColumn(leaves, candidates[column]?.key, column, notes, parse, problem, shape);
  const takeString = (column: AliasedColumn) => take(column, scalarToString, 'is not a single value');

  const ts = takeTimestamp(leaves, candidates.ts?.key, ctx.receivedAt, notes, shape);
  let message = takeString('message');
  if (message?.startsWith(' ')) {
    // rsyslog's `msg` keeps the space after `tag:` (and RFC 5424 frames it after the SP
    // that ends the header): one leading space is layout, not text. `raw` puts it back.
    message = message.slice(1);
    shape.ls = 1;
  }
  let truncatedMessage = message;
  if (message !== null) {
    truncatedMessage = truncateUtf8(message, MAX_MESSAGE_BYTES);
    if (truncatedMessage !== message) {
      // The cut message is all there is to give back: no second copy of the whole one.
      if (shape.v) delete shape.v.message;
      notes.push(`message truncated from ${Buffer.byteLength(message)} to ${MAX_MESSAGE_BYTES} bytes`);
    }
  }

  const event: NormalisedEvent = {
    ev_id: '',
    ts: ts.ms,
    received_at: ctx.receivedAt,
    host: takeString('host'),
    app: takeString('app'),
    severity: take('severity', parseSeverity, 'is not a recognised severity'),
    facility: take('facility', parseFacility, 'is not a facility'),
    message: truncatedMessage,
    src_ip: take('src_ip', parseIp, 'is not an IP address'),
    src_port: take('src_port', parsePort, 'is not a port number'),
    dst_ip: take('dst_ip', parseIp, 'is not an IP address'),
    dst_port: take('dst_port', parsePort, 'is not a port number'),
    user: takeString('user'),
    action: takeString('action'),
    status: take('status', parseInteger, 'is not an integer'),
    bytes: take('bytes', parseByteCount, 'is not a non-negative integer'),
    source: takeString('source'),
    intake: ctx.intake,
    fields: {},
    shape: null,
    pattern_id: null,
  };

  const added: string[] = [];
  for (const [key, value] of Object.entries(ctx.meta ?? {})) {
    if (leaves.has(key)) continue;
    leaves.set(key, value);
    added.push(key);
  }
  const tag = leaves.get('syslogtag');
  if (event.app === null && typeof tag === 'string') {
    // rsyslog's layout without `programname`: app and pid come from the tag, which stays.
    const m = SYSLOG_TAG_RE.exec(tag.trim());
    if (m) {
      event.app = m[1]!;
      shape.d = ['app'];
      if (m[2] !== undefined && !leaves.has('proc_id') && !leaves.has('PID')) {
        leaves.set('proc_id', m[2]);
        added.push('proc_id');
      }
    }
  }
  if (ts.unparsed !== undefined) {
    leaves.set(TS_UNPARSED_FIELD, ts.unparsed);
    added.push(TS_UNPARSED_FIELD);
  }
  if (truncatedMessage !== message) leaves.set(TRUNCATED_FIELD, 'message');
  if (added.length > 0) shape.o = added;
  if (leaves.size > MAX_FIELDS) {
    return { ok: false, detail: `record has ${leaves.size} fields (limit ${MAX_FIELDS})` };
  }
  const fields: Record<string, string> = {};
  for (const [sent, value] of leaves) {
    const text = leafToString(value);
    if (text === null) return { ok: false, detail: `field "${clip(sent)}" is nested too deeply to store` };
    const key = storedFieldKey(sent, leaves, fields);
    if (key !== sent) put(part(shape, 'k'), key, sent);
    const type = jsonType(value);
    if (type !== undefined) put(part(shape, 't'), key, type);
    put(fields, key, text);
  }
  if (flat.paths) shape.p = flat.paths;
  if (flat.empties) shape.z = flat.empties;
  event.fields = fields;
  event.shape = encodeShape(shape);
  event.ev_id = ctx.newId();
  return notes.length > 0 ? { ok: true, event, notes } : { ok: true, event };
}

/**
 * The name a field is stored under: a sender's `ev_id` (and the other reserved names)
 * as `orig.ev_id`, a shipper's `PID` as `proc_id`; the name as sent when the new one is
 * taken by another key of the record.
 */
function storedFieldKey(sent: string, leaves: Map<string, Leaf>, stored: Record<string, string>): string {
  const key = FIELD_RENAMES.get(sent);
  return key === undefined || leaves.has(key) || Object.hasOwn(stored, key) ? sent : key;
}

/** The shape's map `key`, made when first needed. */
function part<K extends 'k' | 'v' | 't'>(shape: RecordShape, key: K): NonNullable<RecordShape[K]> {
  let map = shape[key];
  if (map === undefined) {
    map = {};
    shape[key] = map;
  }
  return map as NonNullable<RecordShape[K]>;
}

/** Assignment, except for `__proto__`, whose setter assignment would run. */
function put<T>(target: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') setOwn(target, key, value);
  else target[key] = value;
}

function jsonType(value: Leaf): JsonType | undefined {
  switch (typeof value) {
    case 'string':
      return undefined;
    case 'number':
    case 'bigint':
      return 'n';
    case 'boolean':
      return 'b';
    default:
      return 'j';
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'a non-JSON object';
  const type = typeof value;
  return type === 'undefined' ? 'nothing' : `a ${type}`;
}

/** Upper bound on keys columns can consume, so flattening can stop early on huge records. */
const CONSUMABLE_KEYS = Object.keys(COLUMN_ALIASES).length;

/**
 * Depth needs no separate limit: every level adds at least one character to the dotted
 * name, so the name-length cap stops recursion after at most MAX_FIELD_NAME_LENGTH levels.
 * `path` is the stack of keys down to `obj`; `dotted` counts those that hold a dot.
 * (No try/finally around the recursion: after an error the path is never read again.)
 */
function flatten(
  obj: Record<string, unknown>,
  prefix: string | null,
  path: string[],
  dotted: number,
  out: Flattened,
  notes: string[],
): string | null {
  for (const key of Object.keys(obj)) {
    const name = prefix === null ? key : `${prefix}.${key}`;
    if (name.length > MAX_FIELD_NAME_LENGTH) {
      return `field name "${clip(name)}" is ${name.length} characters long (limit ${MAX_FIELD_NAME_LENGTH})`;
    }
    const value = obj[key];
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    const hasDot = key.includes('.') ? 1 : 0;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const child = value as Record<string, unknown>;
      let empty = true;
      for (const _ in child) {
        empty = false;
        break;
      }
      if (!empty) {
        path.push(key);
        const error = flatten(child, name, path, dotted + hasDot, out, notes);
        path.pop();
        if (error) return error;
        continue;
      }
    }
    if (out.leaves.has(name) || (out.empties && Object.hasOwn(out.empties, name))) {
      notes.push(`field "${clip(name)}" appears twice after flattening; kept the first value`);
      continue;
    }
    if (dotted + hasDot > 0) {
      out.paths ??= {};
      setOwn(out.paths, name, [...path, key]);
    }
    if (value === null || (typeof value === 'object' && !Array.isArray(value))) {
      // null and {} hold nothing to search; the shape keeps them for `raw`.
      out.empties ??= {};
      setOwn(out.empties, name, value === null ? null : {});
      out.emptyCount = (out.emptyCount ?? 0) + 1;
    } else out.leaves.set(name, value as Leaf);
    if (out.leaves.size + (out.emptyCount ?? 0) > MAX_FIELDS + CONSUMABLE_KEYS) {
      return `record has more than ${MAX_FIELDS} fields`;
    }
  }
  return null;
}

function leafToString(value: Leaf): string | null {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return String(value);
  try {
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
  } catch {
    // Only a stack overflow on absurdly deep arrays gets here.
    return null;
  }
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/**
 * Consumes the column's alias `key` when `parse` accepts its value; otherwise leaves it in
 * fields. Records in the shape the key as sent and the value as sent where they differ
 * from the column's name and canonical form.
 */
function takeColumn<T>(
  leaves: Map<string, Leaf>,
  key: string | undefined,
  column: AliasedColumn,
  notes: string[],
  parse: (value: Leaf) => T | null,
  problem: string,
  shape: RecordShape,
): T | null {
  if (key === undefined) return null;
  const value = leaves.get(key)!;
  const parsed = parse(value);
  if (parsed === null) {
    notes.push(`${column}: ${preview(value)} ${problem}; kept in fields.${key}`);
    return null;
  }
  leaves.delete(key);
  if (key !== column) part(shape, 'k')[column] = key;
  if (value !== parsed) part(shape, 'v')[column] = jsonValue(value);
  return parsed;
}

function takeTimestamp(
  leaves: Map<string, Leaf>,
  key: string | undefined,
  receivedAt: number,
  notes: string[],
  shape: RecordShape,
): { ms: number; unparsed?: string } {
  if (key === undefined) {
    shape.nt = 1;
    return { ms: receivedAt };
  }
  const value = leaves.get(key)!;
  leaves.delete(key);
  if (key !== 'ts') part(shape, 'k').ts = key;
  const ms = parseTimestamp(value);
  if (ms !== null) {
    if (isCanonicalIso(value)) return { ms };
    // An epoch number that the stored ms give back exactly needs only its unit, so the
    // shape repeats from event to event instead of holding every event's time again.
    if (typeof value === 'number' && ms / 1000 === value) shape.tu = 's';
    else if (typeof value === 'number' && ms === value) shape.tu = 'ms';
    else part(shape, 'v').ts = jsonValue(value);
    return { ms };
  }
  part(shape, 'v').ts = jsonValue(value);
  const unparsed = leafToString(value) ?? '';
  notes.push(
    `ts: ${preview(value)} in "${key}" is not a timestamp; used the receive time and kept the value in fields.${TS_UNPARSED_FIELD}`,
  );
  return { ms: receivedAt, unparsed };
}

/**
 * `toISOString`'s form (`2024-05-01T10:00:00.123Z`), which a parsed time gives back
 * exactly: tested by shape, which costs far less than formatting the time again. A leap
 * second (`:60`) reads as the next minute, so it is not canonical.
 */
const CANONICAL_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:(?:[0-5]\d)\.\d{3}Z$/;
const isCanonicalIso = (value: Leaf): boolean => typeof value === 'string' && CANONICAL_ISO.test(value);

/** A leaf as JSON can hold it (a bigint only comes from hand-made records). */
const jsonValue = (value: Leaf): unknown => (typeof value === 'bigint' ? Number(value) : value);

function preview(value: Leaf): string {
  const text = Array.isArray(value)
    ? 'an array'
    : JSON.stringify(typeof value === 'bigint' ? String(value) : value);
  return clip(text);
}
