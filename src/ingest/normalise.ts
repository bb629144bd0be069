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
import { isIP } from 'node:net';
import type { NormalisedEvent, Severity } from '../core/event.js';
import { encodeShape, type JsonType, type RecordShape, setOwn } from '../core/record-shape.js';
import { parseIsoMs } from '../core/time.js';
import { parseSeverityValue } from '../filter/ast.js';

/** `message` longer than this many bytes of UTF-8 is truncated (and marked). */
export const MAX_MESSAGE_BYTES = 65_536;
/** A record with more entries in `fields` than this is rejected. */
export const MAX_FIELDS = 1000;
/** A record with a flattened field name longer than this (UTF-16 code units) is rejected. */
export const MAX_FIELD_NAME_LENGTH = 256;

/** Holds the original `ts` value when it could not be read as a time. */
export const TS_UNPARSED_FIELD = '_ts_unparsed';
/** Names the column that was truncated (`message`). */
export const TRUNCATED_FIELD = '_truncated';

/**
 * Where each column is read from, in order of preference. The API's documented names first, then
 * the ECS names Beats and Elastic Agent send for the same thing (`service.name`,
 * `source.ip`, ...) and the common `client_ip`, then the stock layouts of the shippers
 * the API documents: syslog-ng (`MESSAGE HOST PROGRAM PRIORITY FACILITY ISODATE`), rsyslog
 * (`msg fromhost programname timereported syslogseverity-text syslogfacility-text`),
 * journald (`MESSAGE _HOSTNAME SYSLOG_IDENTIFIER PRIORITY SYSLOG_FACILITY
 * __REALTIME_TIMESTAMP`, and `_COMM` for the app of a process that set no identifier), GELF (`short_message host level timestamp`), Docker (`log
 * time`) and winston-elasticsearch's transformer, which puts a logger's meta under `fields`
 * (`fields.host`, `fields.service`, `fields.user`, ...: last, so a top-level name wins), so that
 * shippers work unchanged without the list turning into guesswork.
 */
export const COLUMN_ALIASES = {
  ts: ['@timestamp', 'timestamp', 'ts', 'time', 'ISODATE', 'timereported', '__REALTIME_TIMESTAMP'],
  message: ['message', 'msg', 'log', 'MESSAGE', 'short_message'],
  host: ['host', 'hostname', 'host.name', 'HOST', 'fromhost', '_HOSTNAME', 'fields.host'],
  app: [
    'app',
    'service',
    'program',
    'appname',
    'service.name',
    'PROGRAM',
    'programname',
    'SYSLOG_IDENTIFIER',
    '_COMM',
    'fields.service',
  ],
  severity: [
    'severity',
    'level',
    'log.level',
    'PRIORITY',
    'priority',
    'syslogseverity-text',
    'syslogseverity',
  ],
  facility: ['facility', 'FACILITY', 'syslogfacility-text', 'SYSLOG_FACILITY', 'syslogfacility'],
  src_ip: ['src_ip', 'source.ip', 'client_ip', 'fields.src_ip'],
  src_port: ['src_port', 'source.port', 'fields.src_port'],
  dst_ip: ['dst_ip', 'destination.ip', 'fields.dst_ip'],
  dst_port: ['dst_port', 'destination.port', 'fields.dst_port'],
  user: ['user', 'user.name', 'fields.user'],
  action: ['action', 'fields.action'],
  status: ['status', 'fields.status'],
  bytes: ['bytes', 'fields.bytes'],
  source: ['source'],
} as const satisfies Record<string, readonly string[]>;

/**
 * Fields (not columns) that shippers name differently: stored under one name so that one
 * query finds them all. The syslog parser's `proc_id` is the name.
 */
const FIELD_ALIASES: Readonly<Record<string, string>> = {
  PID: 'proc_id',
  _PID: 'proc_id',
  procid: 'proc_id',
};

/**
 * Keys that name columns Logscope fills itself: a sender's value is kept
 * as field `orig.<name>`, and `raw` gives it back under its own name.
 */
export const RESERVED_KEYS = ['ev_id', 'received_at', 'stored_at', 'intake'] as const;
export const ORIGINAL_PREFIX = 'orig.';

/** Every field stored under another name than it was sent with: one lookup per field. */
const FIELD_RENAMES: ReadonlyMap<string, string> = new Map([
  ...RESERVED_KEYS.map((k) => [k, ORIGINAL_PREFIX + k] as const),
  ...Object.entries(FIELD_ALIASES),
]);

/** rsyslog's `syslogtag`: `sshd[123]:`. */
const SYSLOG_TAG_RE = /^([^\s[\]:]+)(?:\[(\d+)\])?:?$/;

type AliasedColumn = keyof typeof COLUMN_ALIASES;

/** Alias → column and rank, so a record's keys are looked up once instead of every alias. */
const ALIAS_INDEX = new Map<string, { column: AliasedColumn; rank: number }>();
for (const [column, aliases] of Object.entries(COLUMN_ALIASES) as [AliasedColumn, readonly string[]][]) {
  aliases.forEach((alias, rank) => {
    ALIAS_INDEX.set(alias, { column, rank });
  });
}

/** For each column, the key of its best-ranked alias present in the flattened record. */
type Candidates = Partial<Record<AliasedColumn, { key: string; rank: number }>>;

/** Syslog facility names by code (RFC 5424 table 1; 12–15 as syslog-ng names them). */
export const SYSLOG_FACILITIES = [
  'kern',
  'user',
  'mail',
  'daemon',
  'auth',
  'syslog',
  'lpr',
  'news',
  'uucp',
  'cron',
  'authpriv',
  'ftp',
  'ntp',
  'security',
  'console',
  'solaris-cron',
  'local0',
  'local1',
  'local2',
  'local3',
  'local4',
  'local5',
  'local6',
  'local7',
] as const;

/**
 * pino and bunyan write `level` as 10..60; those never collide with syslog's 0..7, and
 * Node services logging with pino are a large share of what arrives as JSON.
 */
/** A record's level as a severity (the filter's own parser: names, syslog codes, pino levels). */
export function parseSeverity(value: unknown): Severity | null {
  return parseSeverityValue(value) ?? null;
}

// Epoch magnitude boundaries by count of integer digits: up to 11 digits are seconds (to
// the year 5138), 12–14 ms, 15–17 µs, 18–20 ns. Milliseconds before March 1973 therefore
// read as seconds; no real log stream sends those. `perMs` null marks seconds.
const EPOCH_UNITS = [
  { maxDigits: 11, perMs: null },
  { maxDigits: 14, perMs: 1n },
  { maxDigits: 17, perMs: 1000n },
  { maxDigits: 20, perMs: 1_000_000n },
] as const;

const DECIMAL_RE = /^([+-]?)(\d+)(?:\.(\d+))?$/;
/**
 * Reads an event time into Unix ms: an ISO 8601 date or date-time (no zone means UTC, not
 * the server's zone, so results do not depend on where the service runs), or an epoch in
 * s, ms, µs or ns (number or numeric string) told apart by magnitude. Null when it is none
 * of those, and for negative epochs. Sub-millisecond digits are truncated.
 */
export function parseTimestamp(value: unknown): number | null {
  if (typeof value === 'number') {
    // The common case, without string or BigInt work; same boundaries as EPOCH_UNITS.
    if (Number.isSafeInteger(value) && value >= 0) {
      if (value === 0) return 0; // and not -0
      if (value < 1e11) return value * 1000;
      if (value < 1e14) return value;
      return Math.floor(value / 1000);
    }
    if (!Number.isFinite(value)) return null;
    const text = String(value);
    // Exponent notation only appears for |value| < 1e-6 or >= 1e21: a fraction of a
    // second after 1970, or too large for any unit.
    if (!DECIMAL_RE.test(text)) return Math.abs(value) < 1 ? 0 : null;
    return parseEpoch(text);
  }
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (DECIMAL_RE.test(text)) return parseEpoch(text);
  return parseIsoMs(text);
}

function parseEpoch(text: string): number | null {
  const m = DECIMAL_RE.exec(text)!;
  const negative = m[1] === '-';
  const intDigits = m[2]!.replace(/^0+(?=\d)/, '');
  const unit = EPOCH_UNITS.find((u) => intDigits.length <= u.maxDigits);
  if (!unit) return null;
  let ms: bigint;
  if (unit.perMs === null) {
    // Exact decimal arithmetic: 1700000000.123 * 1000 in floating point is ...122.9999.
    const frac = (m[3] ?? '').slice(0, 3).padEnd(3, '0');
    ms = BigInt(intDigits) * 1000n + BigInt(frac);
  } else {
    ms = BigInt(intDigits) / unit.perMs;
  }
  // Epochs before 1970 are sentinels (-1) or garbage far more often than real times.
  if (negative && ms !== 0n) return null;
  return Number(ms);
}

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

/** A flattened leaf: what JSON can hold below an object, minus null (which is dropped). */
type Leaf = string | number | boolean | bigint | unknown[];

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

function scalarToString(value: Leaf): string | null {
  return Array.isArray(value) ? null : String(value);
}

function parseFacility(value: Leaf): string | null {
  if (Array.isArray(value)) return null;
  const text = String(value).trim();
  if (/^\d{1,2}$/.test(text)) return SYSLOG_FACILITIES[Number(text)] ?? text;
  return String(value);
}

/** Zone ids (`fe80::1%eth0`) are refused: they mean nothing off the sending host. */
function parseIp(value: Leaf): string | null {
  return typeof value === 'string' && isIP(value) !== 0 && !value.includes('%') ? value : null;
}

function parseInteger(value: Leaf): number | null {
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) n = Number(value);
  else return null;
  if (!Number.isSafeInteger(n)) return null;
  return n === 0 ? 0 : n; // no -0 from "-0"
}

function parsePort(value: Leaf): number | null {
  const n = parseInteger(value);
  return n !== null && n >= 0 && n <= 65_535 ? n : null;
}

function parseByteCount(value: Leaf): number | null {
  const n = parseInteger(value);
  return n !== null && n >= 0 ? n : null;
}

/** Cuts at a character boundary so the result is still valid UTF-8. */
export function truncateUtf8(text: string, maxBytes: number): string {
  // Every UTF-16 code unit is at most 3 bytes of UTF-8, so short strings skip the count.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let cut = maxBytes;
  while (cut > 0 && (bytes[cut]! & 0xc0) === 0x80) cut--;
  return bytes.subarray(0, cut).toString('utf8');
}

/** Columns a pipeline step may write (besides `ts`, which the timestamp step sets). */
export const WRITABLE_COLUMNS = [
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
] as const;
export type WritableColumn = (typeof WRITABLE_COLUMNS)[number];

const COLUMN_PARSERS: Readonly<Record<WritableColumn, (value: string) => string | number | null>> = {
  host: (v) => v,
  app: (v) => v,
  severity: parseSeverity,
  facility: parseFacility,
  message: (v) => truncateUtf8(v, MAX_MESSAGE_BYTES),
  src_ip: parseIp,
  src_port: parsePort,
  dst_ip: parseIp,
  dst_port: parsePort,
  user: (v) => v,
  action: (v) => v,
  status: parseInteger,
  bytes: parseByteCount,
  source: (v) => v,
};

/**
 * A text value in a column's type, read as a record's value for that column is (a
 * severity name, an IP address, a port...); null when the column cannot take it.
 */
export function columnValue(column: WritableColumn, text: string): string | number | null {
  return COLUMN_PARSERS[column](text);
}
