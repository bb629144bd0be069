/**
 * Values as columns take them: severity, time (ISO 8601 or epoch in any unit), facility,
 * IP addresses, ports and counts, and the message cut to its byte cap. Record
 * normalisation (normalise.ts) and pipeline steps read values with these, so a value
 * means the same wherever it is written.
 */
import { isIP } from 'node:net';
import type { Severity } from '../core/event.js';
import { parseIsoMs } from '../core/time.js';
import { parseSeverityValue } from '../filter/ast.js';

/** `message` longer than this many bytes of UTF-8 is truncated (and marked). */
export const MAX_MESSAGE_BYTES = 65_536;

/** A flattened leaf: what JSON can hold below an object, minus null (which is dropped). */
export type Leaf = string | number | boolean | bigint | unknown[];

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

export function scalarToString(value: Leaf): string | null {
  return Array.isArray(value) ? null : String(value);
}

export function parseFacility(value: Leaf): string | null {
  if (Array.isArray(value)) return null;
  const text = String(value).trim();
  if (/^\d{1,2}$/.test(text)) return SYSLOG_FACILITIES[Number(text)] ?? text;
  return String(value);
}

/** Zone ids (`fe80::1%eth0`) are refused: they mean nothing off the sending host. */
export function parseIp(value: Leaf): string | null {
  return typeof value === 'string' && isIP(value) !== 0 && !value.includes('%') ? value : null;
}

export function parseInteger(value: Leaf): number | null {
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) n = Number(value);
  else return null;
  if (!Number.isSafeInteger(n)) return null;
  return n === 0 ? 0 : n; // no -0 from "-0"
}

export function parsePort(value: Leaf): number | null {
  const n = parseInteger(value);
  return n !== null && n >= 0 && n <= 65_535 ? n : null;
}

export function parseByteCount(value: Leaf): number | null {
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
