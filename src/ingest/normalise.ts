/**
 * Record normalisation (API.md §7): one received JSON record becomes one NormalisedEvent.
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
 * - Keys are case-sensitive (`Message` is a field, not the message).
 * - Keys that name columns filled from elsewhere (`ev_id`, `received_at`, `stored_at`,
 *   `source`) are ordinary fields: the record cannot forge them.
 */
import { isIP } from 'node:net';
import { type NormalisedEvent, SEVERITIES, type Severity } from '../core/event.js';

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
 * Where each column is read from, in order of preference. The API.md §7 names first; beyond
 * them only the ECS names Beats and Elastic Agent send for the same thing (`service.name`,
 * `source.ip`, ...) and the common `client_ip`, so that shippers work unchanged without the
 * list turning into guesswork.
 */
export const COLUMN_ALIASES = {
  ts: ['@timestamp', 'timestamp', 'ts', 'time'],
  message: ['message', 'msg', 'log'],
  host: ['host', 'hostname', 'host.name'],
  app: ['app', 'service', 'program', 'appname', 'service.name'],
  severity: ['severity', 'level', 'log.level'],
  facility: ['facility'],
  src_ip: ['src_ip', 'source.ip', 'client_ip'],
  src_port: ['src_port', 'source.port'],
  dst_ip: ['dst_ip', 'destination.ip'],
  dst_port: ['dst_port', 'destination.port'],
  user: ['user', 'user.name'],
  action: ['action'],
  status: ['status'],
  bytes: ['bytes'],
} as const satisfies Record<string, readonly string[]>;

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

const SEVERITY_ALIASES: Readonly<Record<string, Severity>> = {
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

/**
 * pino and bunyan write `level` as 10..60; those never collide with syslog's 0..7, and
 * Node services logging with pino are a large share of what arrives as JSON.
 */
const PINO_LEVELS: Readonly<Record<number, Severity>> = {
  10: 'debug',
  20: 'debug',
  30: 'info',
  40: 'warning',
  50: 'error',
  60: 'critical',
};

/** Reads a severity name, alias, syslog code (0–7) or pino level; null when unknown. */
export function parseSeverity(value: unknown): Severity | null {
  if (typeof value === 'string') {
    const key = value.trim().toLowerCase();
    if (Object.hasOwn(SEVERITY_ALIASES, key)) return SEVERITY_ALIASES[key]!;
    return /^\d{1,2}$/.test(key) ? severityFromCode(Number(key)) : null;
  }
  if (typeof value === 'number') return severityFromCode(value);
  return null;
}

function severityFromCode(code: number): Severity | null {
  if (Number.isInteger(code) && code >= 0 && code <= 7) return SEVERITIES[code]!;
  return PINO_LEVELS[code] ?? null;
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
const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

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
  return parseIso(text);
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

function parseIso(text: string): number | null {
  const m = ISO_RE.exec(text);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  // 60 is a leap second; Date arithmetic carries it into the next minute.
  if (hour > 23 || minute > 59 || second > 60) return null;
  const millis = Number(frac.slice(0, 3).padEnd(3, '0'));
  let offsetMinutes = 0;
  if (zone && zone !== 'Z' && zone !== 'z') {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  return utcMs(year, month, day, hour, minute, second, millis) - offsetMinutes * 60_000;
}

/** Date.UTC maps years 0–99 to 1900–1999; setUTCFullYear does not. */
export function utcMs(
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
  millis: number,
): number {
  if (year >= 100) return Date.UTC(year, month - 1, day, hour, minute, second, millis);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millis);
  return date.getTime();
}

/** Month is 1-based. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

export interface NormaliseContext {
  /** Receive time, Unix ms; also the event time when the record has none. */
  receivedAt: number;
  /** Ingest source or token name, stored in the `source` column. */
  source: string | null;
  /** Makes the event id (a ULID); called once per accepted record. */
  newId: () => string;
}

export type NormaliseResult =
  | { ok: true; event: NormalisedEvent; notes?: string[] }
  | { ok: false; detail: string };

/** A flattened leaf: what JSON can hold below an object, minus null (which is dropped). */
type Leaf = string | number | boolean | bigint | unknown[];

/**
 * Turns one received record into an event. Never throws: a record it cannot accept comes
 * back as `{ok: false, detail}` so the caller rejects that record alone.
 */
export function normaliseRecord(record: unknown, ctx: NormaliseContext): NormaliseResult {
  if (!isPlainObject(record)) {
    return { ok: false, detail: `record must be a JSON object, got ${describeType(record)}` };
  }
  const notes: string[] = [];
  const flat = new Map<string, Leaf>();
  const flattenError = flatten(record, null, flat, notes);
  if (flattenError) return { ok: false, detail: flattenError };

  const candidates: Candidates = {};
  for (const key of flat.keys()) {
    const alias = ALIAS_INDEX.get(key);
    if (alias === undefined) continue;
    const current = candidates[alias.column];
    if (current === undefined || alias.rank < current.rank)
      candidates[alias.column] = { key, rank: alias.rank };
  }
  const take = <T>(column: AliasedColumn, parse: (value: Leaf) => T | null, problem: string) =>
    takeColumn(flat, candidates[column]?.key, column, notes, parse, problem);
  const takeString = (column: AliasedColumn) => take(column, scalarToString, 'is not a single value');

  const ts = takeTimestamp(flat, candidates.ts?.key, ctx.receivedAt, notes);
  const message = takeString('message');
  let truncatedMessage = message;
  if (message !== null) {
    truncatedMessage = truncateUtf8(message, MAX_MESSAGE_BYTES);
    if (truncatedMessage !== message) {
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
    source: ctx.source,
    fields: {},
  };

  if (ts.unparsed !== undefined) flat.set(TS_UNPARSED_FIELD, ts.unparsed);
  if (truncatedMessage !== message) flat.set(TRUNCATED_FIELD, 'message');
  if (flat.size > MAX_FIELDS) {
    return { ok: false, detail: `record has ${flat.size} fields (limit ${MAX_FIELDS})` };
  }
  const fields: Record<string, string> = {};
  for (const [key, value] of flat) {
    const text = leafToString(value);
    if (text === null) return { ok: false, detail: `field "${clip(key)}" is nested too deeply to store` };
    if (key === '__proto__') setOwn(fields, key, text);
    else fields[key] = text;
  }
  event.fields = fields;
  event.ev_id = ctx.newId();
  return notes.length > 0 ? { ok: true, event, notes } : { ok: true, event };
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
 */
function flatten(
  obj: Record<string, unknown>,
  prefix: string | null,
  out: Map<string, Leaf>,
  notes: string[],
): string | null {
  for (const key of Object.keys(obj)) {
    const name = prefix === null ? key : `${prefix}.${key}`;
    if (name.length > MAX_FIELD_NAME_LENGTH) {
      return `field name "${clip(name)}" is ${name.length} characters long (limit ${MAX_FIELD_NAME_LENGTH})`;
    }
    const value = obj[key];
    if (value === null || value === undefined) continue;
    if (typeof value === 'object' && !Array.isArray(value)) {
      const error = flatten(value as Record<string, unknown>, name, out, notes);
      if (error) return error;
      continue;
    }
    if (typeof value === 'function' || typeof value === 'symbol') continue;
    if (out.has(name)) {
      notes.push(`field "${clip(name)}" appears twice after flattening; kept the first value`);
      continue;
    }
    out.set(name, value as Leaf);
    if (out.size > MAX_FIELDS + CONSUMABLE_KEYS) return `record has more than ${MAX_FIELDS} fields`;
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

/** Consumes the column's alias `key` when `parse` accepts its value; otherwise leaves it in fields. */
function takeColumn<T>(
  flat: Map<string, Leaf>,
  key: string | undefined,
  column: AliasedColumn,
  notes: string[],
  parse: (value: Leaf) => T | null,
  problem: string,
): T | null {
  if (key === undefined) return null;
  const value = flat.get(key)!;
  const parsed = parse(value);
  if (parsed === null) {
    notes.push(`${column}: ${preview(value)} ${problem}; kept in fields.${key}`);
    return null;
  }
  flat.delete(key);
  return parsed;
}

function takeTimestamp(
  flat: Map<string, Leaf>,
  key: string | undefined,
  receivedAt: number,
  notes: string[],
): { ms: number; unparsed?: string } {
  if (key === undefined) return { ms: receivedAt };
  const value = flat.get(key)!;
  flat.delete(key);
  const ms = parseTimestamp(value);
  if (ms !== null) return { ms };
  const unparsed = leafToString(value) ?? '';
  notes.push(
    `ts: ${preview(value)} in "${key}" is not a timestamp; used the receive time and kept the value in fields.${TS_UNPARSED_FIELD}`,
  );
  return { ms: receivedAt, unparsed };
}

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

/** Columns in the order `toRawRecord` writes them, after `ts`. */
const RAW_COLUMNS = [
  'message',
  'host',
  'app',
  'severity',
  'facility',
  'src_ip',
  'src_port',
  'dst_ip',
  'dst_port',
  'user',
  'action',
  'status',
  'bytes',
] as const satisfies readonly (keyof NormalisedEvent)[];

/**
 * Rebuilds the received record from an event (ARCHITECTURE.md: `raw` is rebuilt, not
 * stored twice). What comes back equals the original in content, with these known
 * differences:
 * - key names are canonical: the column names above plus `ts`, whatever alias was sent
 *   (`msg` comes back as `message`, `hostname` as `host`; see rawKeyFor for the one
 *   exception), and severity as its syslog name;
 * - `ts` is always present, as an ISO 8601 UTC string (the receive time when the record
 *   had none), or the original text when it could not be parsed;
 * - field values come back as strings (fields store strings; guessing types back would
 *   turn the string "007" into 7), arrays as their JSON text;
 * - dotted names are nested again, which also nests keys that were sent with dots in them;
 *   where a dotted name collides with a value already there, it stays a dotted key;
 * - `ev_id`, `received_at`, `stored_at` and `source` are ours, not the sender's: left out;
 * - `_truncated` stays, so nobody mistakes a truncated message for the whole one.
 */
export function toRawRecord(event: NormalisedEvent): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  const fields = event.fields;
  // Ours only if the receive time stood in and the value really is no time; otherwise the
  // sender wrote that key themselves and it stays a field.
  const candidate = Object.hasOwn(fields, TS_UNPARSED_FIELD) ? fields[TS_UNPARSED_FIELD] : undefined;
  const unparsed =
    candidate !== undefined && event.ts === event.received_at && parseTimestamp(candidate) === null
      ? candidate
      : undefined;
  setOwn(raw, rawKeyFor('ts', fields), unparsed ?? isoOrNumber(event.ts));
  for (const column of RAW_COLUMNS) {
    const value = event[column];
    if (value !== null) setOwn(raw, rawKeyFor(column, fields), value);
  }
  const dotted: [string, string][] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (key === TS_UNPARSED_FIELD && unparsed !== undefined) continue;
    // Plain keys first, so a dotted name can never displace a value already placed.
    if (key.includes('.')) dotted.push([key, value]);
    else if (!Object.hasOwn(raw, key)) setOwn(raw, key, value);
    else dotted.push([key, value]);
  }
  for (const [key, value] of dotted) insertPath(raw, key, value);
  return raw;
}

/**
 * The canonical name, unless a field holds it or an alias that outranks it (the record had
 * both, say, `@timestamp` and `timestamp`): then the first alias no field holds. Normalising
 * the rebuilt record then fills the column from the same value again.
 */
function rawKeyFor(column: AliasedColumn, fields: Record<string, string>): string {
  const aliases: readonly string[] = COLUMN_ALIASES[column];
  const free = (alias: string) => !Object.hasOwn(fields, alias);
  if (aliases.slice(0, aliases.indexOf(column) + 1).every(free)) return column;
  return aliases.find(free) ?? column;
}

function isoOrNumber(ms: number): string | number {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? ms : date.toISOString();
}

function insertPath(root: Record<string, unknown>, key: string, value: string): void {
  const segments = key.split('.');
  let node = root;
  for (let i = 0; i < segments.length - 1; i++) {
    const segment = segments[i]!;
    if (!Object.hasOwn(node, segment)) setOwn(node, segment, {});
    const next = node[segment];
    if (typeof next !== 'object' || next === null) {
      placeFlat(root, key, value);
      return;
    }
    node = next as Record<string, unknown>;
  }
  const last = segments[segments.length - 1]!;
  if (Object.hasOwn(node, last)) placeFlat(root, key, value);
  else setOwn(node, last, value);
}

function placeFlat(root: Record<string, unknown>, key: string, value: string): void {
  // Dotted keys are unique among fields and no column key has a dot, so the literal key is
  // free; the guard only matters for events normaliseRecord did not make.
  if (!Object.hasOwn(root, key)) setOwn(root, key, value);
}

/** Assignment would run the `__proto__` setter for that key; a definition does not. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
