/**
 * Syslog: RFC 5424 and RFC 3164 messages into plain records for
 * normaliseRecord, and TCP framing (RFC 6587 octet counting or newline framing).
 *
 * Decisions:
 * - Nothing is ever dropped: a line with no recognisable syslog header becomes
 *   `{message: <line>, syslog_parse: 'failed'}`, so it is stored, searchable, and the
 *   failure can be found with `syslog_parse:failed`. A PRI followed by no valid header is
 *   not a failure: RFC 3164 §4.3.2 says the rest is then the message. A tag opening
 *   that rest (`<14>myapp[123]: hello`, `<14>myapp: hello`, as Python's SysLogHandler
 *   sends) still gives `app` and `proc_id`; a colon must follow the tag, so `<14>hello
 *   world` stays all message (`<14>Error: disk full` does read as app `Error`, as in
 *   rsyslog). Without a timestamp there is no hostname either, as rsyslog reads it.
 * - RFC 3164 times carry no zone and no year. They are read as UTC (as normaliseRecord
 *   reads zoneless ISO times), and the year is the latest one that does not put the time
 *   more than a day after the reference time (December lines read in January land in the
 *   previous year; a sender whose clock is a little ahead still lands in this one).
 * - `Mmm dd hh:mm:ss host app[pid]: msg` is accepted with or without PRI, so plain log
 *   files parse too; so is an RFC 3339 time in place of `Mmm dd hh:mm:ss` (rsyslog's file
 *   format) and a version after the tag (`syslogd 1.4.1: restart.` gives app `syslogd`,
 *   `app_version` `1.4.1`).
 * - The message text is kept as sent (trailing spaces included); only line terminators
 *   (CR, LF, NUL) at the end and a UTF-8 BOM are removed.
 */
import { SEVERITIES, type Severity } from '../../core/event.js';
import { checkedUtc, inferYear } from '../../core/time.js';
import { SYSLOG_FACILITIES } from '../column-values.js';

/** A parsed message, shaped as a record for normaliseRecord. */
export interface SyslogRecord {
  /** ISO 8601: as sent for RFC 5424 and RFC 3339 times, built (UTC) for RFC 3164 ones. */
  ts?: string;
  host?: string;
  app?: string;
  app_version?: string;
  proc_id?: string;
  msg_id?: string;
  severity?: Severity;
  facility?: string;
  message?: string;
  /** RFC 5424 structured data; flattens to fields `sd.<id>.<param>`. A repeated param is a list. */
  sd?: Record<string, Record<string, string | string[]>>;
  syslog_parse?: 'failed';
  _truncated?: 'message';
}

export interface ParseSyslogOptions {
  /** Reference time (Unix ms) for the year of RFC 3164 times; defaults to now. */
  now?: number;
  /** The frame was cut at the size limit: marks the record like normaliseRecord does. */
  truncated?: boolean;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const PRI_RE = /^<(\d{1,3})>/;
const HEADER_5424_RE = /^(\S+) (\S+) (\S+) (\S+) (\S+) /;
// `Mmm dd hh:mm:ss`, the day space-padded or not, optional fraction, optional year after
// the day (Cisco-style `Mmm dd yyyy hh:mm:ss`).
const BSD_TIME_RE =
  /^([A-Za-z]{3}) {1,2}(\d{1,2}) (?:(\d{4}) )?(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?: |$)/;
const RFC3339_TIME_RE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?)(?: |$)/;
const HOST_RE = /^(\S+)(?: |$)/;
// A tag directly followed by ':' (never a hostname: hostnames have no trailing colon).
const TAG_ONLY_RE = /^[^\s[\]:]+(?:\[[^\]]*\])?:$/;
const TAG_RE = /^([^\s[\]:]+)(?:\[([^\]]*)\])?:(?: |$)/;
const TAG_VERSION_RE = /^([^\s[\]:]+) (\d[\w.-]*)(?:\[([^\]]*)\])?:(?: |$)/;
const TAG_PID_NO_COLON_RE = /^([^\s[\]:]+)\[([^\]]*)\](?: |$)/;

/** Parses one syslog message (a UDP datagram, a TCP frame, or a line of a log file). */
export function parseSyslog(line: string, options: ParseSyslogOptions = {}): SyslogRecord {
  const text = stripBom(line).replace(/[\r\n\0]+$/, '');
  const record = parseText(text, options.now ?? Date.now());
  if (options.truncated) record._truncated = 'message';
  return record;
}

function parseText(text: string, now: number): SyslogRecord {
  const priMatch = PRI_RE.exec(text);
  const pri = priMatch && Number(priMatch[1]) <= 191 ? Number(priMatch[1]) : undefined;
  if (pri === undefined) return parse3164(text, now) ?? { message: text, syslog_parse: 'failed' };

  const rest = text.slice(priMatch![0].length);
  const priFields: SyslogRecord = { severity: SEVERITIES[pri & 7]!, facility: SYSLOG_FACILITIES[pri >> 3]! };
  if (rest.startsWith('1 ')) {
    const parsed = parse5424(rest.slice(2));
    return parsed ? { ...parsed, ...priFields } : { ...priFields, message: rest, syslog_parse: 'failed' };
  }
  const parsed = parse3164(rest, now);
  if (parsed) return { ...parsed, ...priFields };
  if (rest === '') return priFields;
  // No timestamp, hence no hostname either (as rsyslog reads it): `tag[pid]: msg` or
  // `tag: msg` still names the app, which is what Python's SysLogHandler sends with an
  // `ident` or a `name: message` formatter (`<14>myapp[123]: hello`).
  const tagged = TAG_RE.exec(rest);
  if (!tagged) return { ...priFields, message: rest };
  const record: SyslogRecord = { app: tagged[1]! };
  if (tagged[2] !== undefined && tagged[2] !== '') record.proc_id = tagged[2];
  const message = rest.slice(tagged[0].length);
  if (message !== '') record.message = message;
  return { ...record, ...priFields };
}

function parse5424(text: string): SyslogRecord | null {
  const header = HEADER_5424_RE.exec(text) ?? HEADER_5424_RE.exec(`${text} `);
  if (!header) return null;
  const [, ts, host, app, procId, msgId] = header;
  const record: SyslogRecord = {};
  if (ts !== '-') record.ts = ts!;
  if (host !== '-') record.host = host!;
  if (app !== '-') record.app = app!;
  if (procId !== '-') record.proc_id = procId!;
  if (msgId !== '-') record.msg_id = msgId!;

  const afterHeader = text.slice(header[0].length);
  let afterSd: string;
  if (afterHeader === '' || afterHeader === '-') afterSd = '';
  else if (afterHeader.startsWith('- ')) afterSd = afterHeader.slice(1);
  else if (afterHeader.startsWith('[')) {
    const sd = parseStructuredData(afterHeader);
    if (!sd) return null;
    record.sd = sd.data;
    afterSd = afterHeader.slice(sd.end);
  } else return null;

  if (afterSd !== '') {
    if (!afterSd.startsWith(' ')) return null;
    const message = stripBom(afterSd.slice(1));
    if (message !== '') record.message = message;
  }
  return record;
}

/**
 * `[id param="value" ...][id2 ...]` with `\"`, `\\` and `\]` escapes in values (other
 * backslashes are kept, RFC 5424 §6.3.3). Null when malformed.
 */
function parseStructuredData(
  text: string,
): { data: Record<string, Record<string, string | string[]>>; end: number } | null {
  const elements = new Map<string, Map<string, string | string[]>>();
  let i = 0;
  while (text[i] === '[') {
    i++;
    const idStart = i;
    while (i < text.length && !' ]="'.includes(text[i]!)) i++;
    const id = text.slice(idStart, i);
    if (id === '') return null;
    const params = elements.get(id) ?? new Map<string, string | string[]>();
    elements.set(id, params);
    while (text[i] === ' ') {
      i++;
      const nameStart = i;
      while (i < text.length && !' ]="'.includes(text[i]!)) i++;
      const name = text.slice(nameStart, i);
      if (name === '' || text[i] !== '=' || text[i + 1] !== '"') return null;
      i += 2;
      let value = '';
      for (;;) {
        const c = text[i];
        if (c === undefined) return null;
        i++;
        if (c === '"') break;
        if (c === '\\' && (text[i] === '"' || text[i] === '\\' || text[i] === ']')) {
          value += text[i];
          i++;
        } else value += c;
      }
      const previous = params.get(name);
      if (previous === undefined) params.set(name, value);
      else params.set(name, Array.isArray(previous) ? [...previous, value] : [previous, value]);
    }
    if (text[i] !== ']') return null;
    i++;
  }
  // fromEntries defines own properties, so an SD-ID of "__proto__" stays data.
  const data = Object.fromEntries([...elements].map(([id, params]) => [id, Object.fromEntries(params)]));
  return { data, end: i };
}

function parse3164(text: string, now: number): SyslogRecord | null {
  const time = readBsdTime(text, now);
  if (!time) return null;
  const record: SyslogRecord = { ts: time.ts };
  let rest = text.slice(time.length);

  const hostMatch = HOST_RE.exec(rest);
  if (hostMatch && !TAG_ONLY_RE.test(hostMatch[1]!)) {
    record.host = hostMatch[1]!;
    rest = rest.slice(hostMatch[0].length);
  }

  const versioned = TAG_VERSION_RE.exec(rest);
  const tagged = versioned ? null : (TAG_RE.exec(rest) ?? TAG_PID_NO_COLON_RE.exec(rest));
  if (versioned) {
    record.app = versioned[1]!;
    record.app_version = versioned[2]!;
    if (versioned[3] !== undefined) record.proc_id = versioned[3];
    rest = rest.slice(versioned[0].length);
  } else if (tagged) {
    record.app = tagged[1]!;
    if (tagged[2] !== undefined && tagged[2] !== '') record.proc_id = tagged[2];
    rest = rest.slice(tagged[0].length);
  }
  if (rest !== '') record.message = rest;
  return record;
}

function readBsdTime(text: string, now: number): { ts: string; length: number } | null {
  const iso = RFC3339_TIME_RE.exec(text);
  if (iso) return { ts: iso[1]!, length: iso[0].length };
  const m = BSD_TIME_RE.exec(text);
  if (!m) return null;
  const month = MONTHS.indexOf(m[1]!.toLowerCase()) + 1;
  const day = Number(m[2]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  const millis = Number((m[7] ?? '').slice(0, 3).padEnd(3, '0'));
  if (month === 0 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null;
  const ms =
    m[3] !== undefined
      ? checkedUtc(Number(m[3]), month, day, hour, minute, second, millis)
      : inferYear(month, day, hour, minute, second, millis, now);
  if (ms === null) return null;
  return { ts: new Date(ms).toISOString(), length: m[0].length };
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Default cap on one syslog message; longer ones are cut and flagged. */
export const DEFAULT_MAX_SYSLOG_MESSAGE_BYTES = 65_536;

export interface SyslogFrame {
  /** The message, decoded as UTF-8 (invalid bytes become U+FFFD: syslog senders are not all UTF-8). */
  text: string;
  /** The message was longer than the limit and `text` is its beginning. */
  truncated: boolean;
  framing: 'octet-counting' | 'non-transparent';
}

const LF = 0x0a;
const CR = 0x0d;
const NUL = 0x00;
const SP = 0x20;
const LT = 0x3c;
/** More length digits than this cannot be an octet count worth waiting for. */
const MAX_LENGTH_DIGITS = 10;

type Detection =
  | { kind: 'wait' }
  | { kind: 'newline' }
  | { kind: 'octet'; length: number; headerLength: number };

/**
 * Splits a TCP syslog stream into messages (RFC 6587). Each message is framed either by
 * octet counting (`MSG-LEN SP <PRI>...`) or by a terminator (LF, CRLF or NUL), decided per
 * message, as some relays mix them. A count is only believed when the message after it
 * starts with `<`, so a plain line that happens to start with "123 " is not mistaken for
 * one. Memory stays bounded by the size limit: the excess of an oversized message is
 * discarded as it arrives, never buffered.
 */
export class SyslogFrameSplitter {
  private buffer: Buffer = Buffer.alloc(0);
  /** Bytes of an oversized octet-counted message still to discard. */
  private skipBytes = 0;
  /** Discarding the rest of an oversized newline-framed message up to its terminator. */
  private skipLine = false;
  /** Where to resume looking for a terminator in a partial newline-framed message. */
  private scanFrom = 0;
  private readonly decoder = new TextDecoder('utf-8');

  constructor(readonly maxMessageBytes = DEFAULT_MAX_SYSLOG_MESSAGE_BYTES) {
    if (!Number.isInteger(maxMessageBytes) || maxMessageBytes < 1) {
      throw new RangeError('maxMessageBytes must be a positive integer');
    }
  }

  /** Adds received bytes; returns the messages they completed. */
  push(chunk: Uint8Array): SyslogFrame[] {
    this.buffer = this.buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.buffer, chunk]);
    const frames: SyslogFrame[] = [];
    while (this.buffer.length > 0) {
      if (this.skipBytes > 0) {
        const n = Math.min(this.skipBytes, this.buffer.length);
        this.skipBytes -= n;
        this.consume(n);
        continue;
      }
      if (this.skipLine) {
        const end = this.findTerminator(0);
        if (end === -1) {
          this.consume(this.buffer.length);
          break;
        }
        this.skipLine = false;
        this.consume(end + 1);
        continue;
      }
      if (this.scanFrom === 0) {
        // Stray terminators between frames (some octet-counting senders add LF too).
        let start = 0;
        while (start < this.buffer.length && isTerminator(this.buffer[start]!)) start++;
        this.consume(start);
        if (this.buffer.length === 0) break;
      }
      const frame = this.nextFrame();
      if (frame === null) break;
      frames.push(frame);
    }
    return frames;
  }

  /** The connection closed: returns an unterminated last message, if any. */
  end(): SyslogFrame[] {
    const frames: SyslogFrame[] = [];
    if (!this.skipLine && this.skipBytes === 0 && this.buffer.length > 0) {
      const detection = this.detect();
      if (detection.kind === 'octet') {
        const body = this.buffer.subarray(detection.headerLength);
        frames.push(this.frame(body, true, 'octet-counting'));
      } else {
        frames.push(this.frame(trimCr(this.buffer), false, 'non-transparent'));
      }
    }
    this.buffer = Buffer.alloc(0);
    this.skipBytes = 0;
    this.skipLine = false;
    this.scanFrom = 0;
    return frames;
  }

  private nextFrame(): SyslogFrame | null {
    const detection = this.scanFrom > 0 ? { kind: 'newline' as const } : this.detect();
    if (detection.kind === 'wait') return null;
    if (detection.kind === 'octet') {
      const { length, headerLength } = detection;
      const available = this.buffer.length - headerLength;
      if (length <= this.maxMessageBytes) {
        if (available < length) return null;
        const frame = this.frame(
          this.buffer.subarray(headerLength, headerLength + length),
          false,
          'octet-counting',
        );
        this.consume(headerLength + length);
        return frame;
      }
      if (available < this.maxMessageBytes) return null;
      const frame = this.frame(
        this.buffer.subarray(headerLength, headerLength + this.maxMessageBytes),
        true,
        'octet-counting',
      );
      this.consume(headerLength + this.maxMessageBytes);
      this.skipBytes = length - this.maxMessageBytes;
      return frame;
    }
    const end = this.findTerminator(this.scanFrom);
    if (end === -1) {
      if (this.buffer.length <= this.maxMessageBytes) {
        this.scanFrom = this.buffer.length;
        return null;
      }
      const frame = this.frame(this.buffer.subarray(0, this.maxMessageBytes), true, 'non-transparent');
      this.consume(this.buffer.length);
      this.skipLine = true;
      return frame;
    }
    const body = trimCr(this.buffer.subarray(0, end));
    const truncated = body.length > this.maxMessageBytes;
    const frame = this.frame(
      truncated ? body.subarray(0, this.maxMessageBytes) : body,
      truncated,
      'non-transparent',
    );
    this.consume(end + 1);
    return frame;
  }

  private detect(): Detection {
    const buf = this.buffer;
    let digits = 0;
    while (digits < buf.length && digits <= MAX_LENGTH_DIGITS && isDigit(buf[digits]!)) digits++;
    if (digits === 0 || buf[0] === 0x30 || digits > MAX_LENGTH_DIGITS) return { kind: 'newline' };
    if (digits === buf.length) return { kind: 'wait' };
    if (buf[digits] !== SP) return { kind: 'newline' };
    if (digits + 1 === buf.length) return { kind: 'wait' };
    if (buf[digits + 1] !== LT) return { kind: 'newline' };
    return {
      kind: 'octet',
      length: Number(buf.subarray(0, digits).toString('latin1')),
      headerLength: digits + 1,
    };
  }

  private findTerminator(from: number): number {
    for (let i = from; i < this.buffer.length; i++) {
      const b = this.buffer[i]!;
      if (b === LF || b === NUL) return i;
    }
    return -1;
  }

  private consume(n: number): void {
    this.buffer = this.buffer.subarray(n);
    this.scanFrom = 0;
  }

  private frame(bytes: Uint8Array, truncated: boolean, framing: SyslogFrame['framing']): SyslogFrame {
    const end = truncated ? completeUtf8Length(bytes) : bytes.length;
    return { text: this.decoder.decode(bytes.subarray(0, end)), truncated, framing };
  }
}

/** Length without a character cut off at the end, so truncation does not end in U+FFFD. */
function completeUtf8Length(bytes: Uint8Array): number {
  let lead = bytes.length - 1;
  while (lead >= 0 && bytes.length - lead < 4 && (bytes[lead]! & 0xc0) === 0x80) lead--;
  if (lead < 0) return bytes.length;
  const b = bytes[lead]!;
  const needed = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
  return lead + needed > bytes.length ? lead : bytes.length;
}

function isDigit(b: number): boolean {
  return b >= 0x30 && b <= 0x39;
}

function isTerminator(b: number): boolean {
  return b === LF || b === CR || b === NUL;
}

function trimCr(bytes: Buffer): Buffer {
  return bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.subarray(0, -1) : bytes;
}
