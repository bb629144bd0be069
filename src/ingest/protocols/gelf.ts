/**
 * GELF (Graylog Extended Log Format 1.1): payload decoding, chunk reassembly and the
 * mapping of one GELF message to the plain JSON record the normaliser takes. Pure apart
 * from synchronous decompression: no sockets, no clock (callers pass the time).
 *
 * Decisions worth knowing before reading the code:
 * - Fields are stored the way Graylog stores them: `short_message` → `message`, `host`
 *   → `host`, `level` → `severity` (syslog 0–7), `timestamp` → `ts` (passed on as sent,
 *   so seconds with a fraction are read exactly and `raw` gives the value back),
 *   `full_message`, `facility`, `line` and `file` under their own names, `version` not
 *   stored. Additional fields lose their leading underscore (`_user_id` → `user_id`,
 *   `_src_ip` → `src_ip`), so the normaliser's column aliases apply to them.
 * - Nothing a sender wrote is lost to a name clash: an additional field whose name
 *   without the underscore is taken (`_message` beside `short_message`) keeps its
 *   underscore; `_id`, which the spec forbids because Graylog's store uses it, is kept
 *   as `_id` rather than refused. Keys the spec does not name and that lack the
 *   underscore are kept as sent (`orig.<key>` when that name is taken).
 * - Malformed: not a JSON object; `short_message` missing, blank or not a string or
 *   number; `version` present but not 1.0/1.1 (a missing version is accepted, as
 *   Graylog does). A missing `host` is accepted (the intake names the sender) and a
 *   missing `level` leaves the severity empty: the spec's default of 1 (alert) would
 *   turn every such message into an alert, and Graylog does not apply it either.
 * - A UDP datagram is a chunk (magic 0x1e 0x0f, 8-byte message id, sequence number,
 *   sequence count ≤ 128, data) or a whole message; a whole or reassembled message is
 *   gzip (0x1f 0x8b), zlib (0x78 and a valid header check) or plain JSON.
 * - Everything is bounded: a message decompressing past GELF_MAX_MESSAGE_BYTES (1 MiB)
 *   is refused without being inflated further (zip bombs), and so is a larger plain or
 *   reassembled one. Reassembly holds at most 1000 messages and 32 MiB of chunks
 *   (evicting the oldest pending message when full: complete messages finish within
 *   milliseconds, so the oldest is the likeliest to be lost anyway), and drops a message
 *   whose chunks do not all arrive within 5 s of its first; such drops are counted as
 *   incomplete. Duplicate chunks are ignored, also when they arrive after their message
 *   completed or was dropped.
 */
import { gunzipSync, inflateSync } from 'node:zlib';
import { own } from '../../core/own.js';

/** Largest GELF message accepted, decompressed (and largest TCP frame). */
export const GELF_MAX_MESSAGE_BYTES = 1 << 20;
/** Chunks a message may be split into (GELF spec). */
export const GELF_MAX_CHUNKS = 128;
/** All chunks of a message must arrive within this long of its first (GELF spec). */
export const GELF_CHUNK_TIMEOUT_MS = 5000;
/** Chunked messages reassembled at once, by default. */
export const GELF_MAX_PENDING_MESSAGES = 1000;
/** Bytes of chunks held for reassembly at once, by default. */
export const GELF_MAX_PENDING_CHUNK_BYTES = 32 * 1024 * 1024;

const CHUNK_HEADER_BYTES = 12;

/** The record for the normaliser, or why the message was not accepted. */
export type GelfRecordResult = { ok: true; record: Record<string, unknown> } | { ok: false; detail: string };

/** What one datagram, TCP frame or HTTP line decoded to. */
export type GelfDecodeResult =
  | { kind: 'message'; record: Record<string, unknown> }
  /** A chunk was kept (or ignored as a duplicate); its message is not complete yet. */
  | { kind: 'pending' }
  | { kind: 'malformed'; detail: string }
  /** Over the size bound: decompressed, reassembled or framed. */
  | { kind: 'too_large'; detail: string };

/** Keys of the GELF spec, with the record key each becomes (null: not stored). */
const STANDARD_KEYS: Readonly<Record<string, string | null>> = {
  version: null,
  short_message: 'message',
  host: 'host',
  full_message: 'full_message',
  timestamp: 'ts',
  level: 'severity',
  facility: 'facility',
  line: 'line',
  file: 'file',
};

const VERSION_RE = /^1(\.[01])?$/;

/** Maps one parsed GELF message to a record for the normaliser (see the decisions above). */
export function gelfToRecord(message: unknown): GelfRecordResult {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    return { ok: false, detail: `a GELF message is a JSON object, got ${describe(message)}` };
  }
  const gelf = message as Record<string, unknown>;
  const version = gelf.version;
  if (
    version !== undefined &&
    !((typeof version === 'string' || typeof version === 'number') && VERSION_RE.test(String(version)))
  ) {
    return { ok: false, detail: `GELF version ${clip(JSON.stringify(version))} is not 1.1` };
  }
  const short = gelf.short_message;
  const shortOk =
    (typeof short === 'string' && short.trim() !== '') ||
    (typeof short === 'number' && Number.isFinite(short));
  if (!shortOk) {
    return {
      ok: false,
      detail:
        short === undefined
          ? 'GELF message has no short_message'
          : 'GELF short_message must be a non-empty string',
    };
  }

  // Null prototype: a sender's `__proto__` key is an ordinary key here.
  const record: Record<string, unknown> = Object.create(null);
  const place = (names: string[], value: unknown) => {
    for (const name of names) {
      if (!Object.hasOwn(record, name)) {
        record[name] = value;
        return;
      }
    }
    // Only a sender that also sends the fallback names on purpose gets here.
  };
  const keys = Object.keys(gelf);
  for (const key of keys) {
    const to = own(STANDARD_KEYS, key);
    if (Object.hasOwn(STANDARD_KEYS, key) && to !== null && to !== undefined) record[to] = gelf[key];
  }
  // Unnamed keys first, so that `x` keeps its name and `_x` beside it keeps the underscore.
  for (const key of keys) {
    if (!key.startsWith('_') && !Object.hasOwn(STANDARD_KEYS, key)) place([key, `orig.${key}`], gelf[key]);
  }
  for (const key of keys) {
    if (!key.startsWith('_')) continue;
    const bare = key.slice(1);
    place(bare === '' || bare === 'id' ? [key, `orig.${key}`] : [bare, key, `orig.${key}`], gelf[key]);
  }
  return { ok: true, record };
}

/** The fixed header of a chunk. */
export interface GelfChunk {
  /** The 8-byte message id, as hex. */
  id: string;
  /** 0-based position of this chunk. */
  seq: number;
  /** Chunks in the message (1–128). */
  count: number;
  data: Buffer;
}

/** Whether a datagram starts with the chunk magic bytes 0x1e 0x0f. */
export const isGelfChunk = (datagram: Uint8Array): boolean =>
  datagram.length >= 2 && datagram[0] === 0x1e && datagram[1] === 0x0f;

/** Reads a chunk's header (the datagram must start with the magic bytes). */
export function parseGelfChunk(datagram: Buffer): GelfChunk | { error: string } {
  if (datagram.length < CHUNK_HEADER_BYTES) return { error: 'GELF chunk shorter than its header' };
  const seq = datagram[10]!;
  const count = datagram[11]!;
  if (count === 0 || count > GELF_MAX_CHUNKS) {
    return { error: `GELF chunk count ${count} is not 1–${GELF_MAX_CHUNKS}` };
  }
  if (seq >= count) return { error: `GELF chunk number ${seq} is not below its count ${count}` };
  return {
    id: datagram.toString('hex', 2, 10),
    seq,
    count,
    data: datagram.subarray(CHUNK_HEADER_BYTES),
  };
}

export interface GelfAssemblerOptions {
  /** Messages being reassembled at once; the oldest is dropped for a new one beyond it. */
  maxMessages?: number;
  /** Bytes of chunk data held at once; the oldest messages are dropped beyond it. */
  maxBytes?: number;
  /** Largest reassembled (still compressed) message. */
  maxMessageBytes?: number;
  /** Time from a message's first chunk within which all must arrive. */
  timeoutMs?: number;
}

export type GelfChunkResult =
  | { kind: 'complete'; payload: Buffer }
  | { kind: 'pending' }
  | { kind: 'duplicate' }
  | { kind: 'malformed'; detail: string }
  | { kind: 'too_large'; detail: string };

interface PendingMessage {
  count: number;
  parts: Array<Buffer | undefined>;
  received: number;
  bytes: number;
  firstAt: number;
}

/**
 * Reassembles chunked GELF messages, bounded in messages, bytes and time (see the file's
 * doc comment). Chunks are keyed by sender and message id, so two senders cannot mix
 * their chunks. `incomplete` counts messages dropped before all their chunks arrived.
 */
export class GelfChunkAssembler {
  /** Chunked messages dropped unfinished (timed out, or evicted when full) since start. */
  incomplete = 0;
  private readonly maxMessages: number;
  private readonly maxBytes: number;
  private readonly maxMessageBytes: number;
  private readonly timeoutMs: number;
  /** In arrival order of each message's first chunk, so the oldest come first. */
  private readonly pending = new Map<string, PendingMessage>();
  private pendingBytes = 0;
  /** Messages completed or dropped lately, by when: their late chunks are ignored. */
  private readonly finished = new Map<string, number>();

  constructor(opts: GelfAssemblerOptions = {}) {
    this.maxMessages = opts.maxMessages ?? GELF_MAX_PENDING_MESSAGES;
    this.maxBytes = opts.maxBytes ?? GELF_MAX_PENDING_CHUNK_BYTES;
    this.maxMessageBytes = opts.maxMessageBytes ?? GELF_MAX_MESSAGE_BYTES;
    this.timeoutMs = opts.timeoutMs ?? GELF_CHUNK_TIMEOUT_MS;
  }

  /** Messages waiting for chunks. */
  get pendingMessages(): number {
    return this.pending.size;
  }

  /** Bytes of chunk data held. */
  get pendingChunkBytes(): number {
    return this.pendingBytes;
  }

  add(chunk: GelfChunk, sender: string, now: number): GelfChunkResult {
    this.sweep(now);
    const key = `${sender}/${chunk.id}`;
    if (this.finished.has(key)) return { kind: 'duplicate' };
    let message = this.pending.get(key);
    if (message === undefined) {
      if (chunk.data.length > this.maxBytes) {
        return { kind: 'too_large', detail: 'GELF chunk larger than the reassembly buffer' };
      }
      while (
        this.pending.size > 0 &&
        (this.pending.size >= this.maxMessages || this.pendingBytes + chunk.data.length > this.maxBytes)
      ) {
        const [oldest] = this.pending.keys();
        this.drop(oldest!, now);
        this.incomplete++;
      }
      message = { count: chunk.count, parts: new Array(chunk.count), received: 0, bytes: 0, firstAt: now };
      this.pending.set(key, message);
    } else if (message.count !== chunk.count) {
      return {
        kind: 'malformed',
        detail: `GELF chunk count ${chunk.count} differs from ${message.count} of the same message`,
      };
    } else if (message.parts[chunk.seq] !== undefined) {
      return { kind: 'duplicate' };
    } else {
      while (this.pendingBytes + chunk.data.length > this.maxBytes) {
        const [oldest] = this.pending.keys();
        if (oldest === key) break;
        this.drop(oldest!, now);
        this.incomplete++;
      }
    }
    if (message.bytes + chunk.data.length > this.maxMessageBytes) {
      this.drop(key, now);
      return {
        kind: 'too_large',
        detail: `chunked GELF message larger than ${this.maxMessageBytes} bytes`,
      };
    }
    message.parts[chunk.seq] = chunk.data;
    message.received++;
    message.bytes += chunk.data.length;
    this.pendingBytes += chunk.data.length;
    if (message.received < message.count) return { kind: 'pending' };
    const payload = Buffer.concat(message.parts as Buffer[], message.bytes);
    this.drop(key, now);
    return { kind: 'complete', payload };
  }

  /** Drops messages whose time is up (counted as incomplete) and forgets old finished ids. */
  sweep(now: number): void {
    for (const [key, message] of this.pending) {
      if (now - message.firstAt <= this.timeoutMs) break;
      this.drop(key, now);
      this.incomplete++;
    }
    for (const [key, at] of this.finished) {
      if (now - at <= this.timeoutMs) break;
      this.finished.delete(key);
    }
  }

  private drop(key: string, now: number): void {
    const message = this.pending.get(key);
    if (message) {
      this.pendingBytes -= message.bytes;
      this.pending.delete(key);
    }
    this.finished.set(key, now);
    // Bounded like the pending messages: beyond it a late duplicate may start a message
    // that then times out (counted), which is all an unbounded memory would prevent.
    if (this.finished.size > this.maxMessages * 4) {
      const [oldest] = this.finished.keys();
      this.finished.delete(oldest!);
    }
  }
}

const utf8 = new TextDecoder('utf-8');

/**
 * A whole message: gzip, zlib or plain JSON, parsed. The decompressed size is bounded
 * by `maxBytes` (decompression stops there), so a small zip bomb costs nothing.
 * Invalid UTF-8 becomes U+FFFD, as for syslog: not every sender writes UTF-8.
 */
export function decodeGelfPayload(payload: Buffer, maxBytes = GELF_MAX_MESSAGE_BYTES): GelfDecodeResult {
  let bytes = payload;
  const b0 = payload[0];
  const b1 = payload[1];
  const gzip = b0 === 0x1f && b1 === 0x8b;
  // zlib: CM 8 in the low nibble and a header that is a multiple of 31 (RFC 1950).
  const zlib = b0 === 0x78 && b1 !== undefined && ((b0 << 8) | b1) % 31 === 0;
  if (gzip || zlib) {
    try {
      bytes = gzip
        ? gunzipSync(payload, { maxOutputLength: maxBytes })
        : inflateSync(payload, { maxOutputLength: maxBytes });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        return { kind: 'too_large', detail: `GELF message decompresses past ${maxBytes} bytes` };
      }
      return { kind: 'malformed', detail: `GELF ${gzip ? 'gzip' : 'zlib'} data is corrupt` };
    }
  } else if (payload.length > maxBytes) {
    return { kind: 'too_large', detail: `GELF message larger than ${maxBytes} bytes` };
  }
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch (err) {
    return { kind: 'malformed', detail: `GELF message is not JSON (${(err as Error).message})` };
  }
  const result = gelfToRecord(value);
  return result.ok
    ? { kind: 'message', record: result.record }
    : { kind: 'malformed', detail: result.detail };
}

/** A UDP datagram: a chunk (handed to the assembler) or a whole message. */
export function decodeGelfDatagram(
  datagram: Buffer,
  sender: string,
  assembler: GelfChunkAssembler,
  now: number,
  maxBytes = GELF_MAX_MESSAGE_BYTES,
): GelfDecodeResult {
  if (!isGelfChunk(datagram)) return decodeGelfPayload(datagram, maxBytes);
  const chunk = parseGelfChunk(datagram);
  if ('error' in chunk) return { kind: 'malformed', detail: chunk.error };
  const result = assembler.add(chunk, sender, now);
  switch (result.kind) {
    case 'complete':
      return decodeGelfPayload(result.payload, maxBytes);
    case 'pending':
    case 'duplicate':
      return { kind: 'pending' };
    case 'malformed':
    case 'too_large':
      return result;
    default:
      return result satisfies never;
  }
}

const isBlank = (bytes: Buffer) => {
  for (const b of bytes) if (b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d) return false;
  return true;
};

/**
 * GELF over TCP: frames end with a NUL byte; a last frame without one is taken when the
 * connection closes. A frame growing past `maxBytes` is skipped up to its NUL and
 * reported once through `onOversize`. Blank frames (a newline between two NULs) are not
 * messages and are skipped.
 */
export class GelfFrameSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping = false;

  constructor(
    private readonly onOversize: () => void,
    private readonly maxBytes = GELF_MAX_MESSAGE_BYTES,
  ) {}

  push(chunk: Buffer): Buffer[] {
    const frames: Buffer[] = [];
    let start = 0;
    for (;;) {
      const nul = chunk.indexOf(0, start);
      if (nul === -1) break;
      this.take(chunk.subarray(start, nul));
      if (!this.skipping) this.emit(frames);
      this.skipping = false;
      this.parts = [];
      this.size = 0;
      start = nul + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
    return frames;
  }

  /** The connection closed: its last frame, if it had one without a NUL. */
  end(): Buffer[] {
    const frames: Buffer[] = [];
    if (!this.skipping) this.emit(frames);
    this.parts = [];
    this.size = 0;
    this.skipping = false;
    return frames;
  }

  private take(piece: Buffer): void {
    if (this.skipping || piece.length === 0) return;
    if (this.size + piece.length > this.maxBytes) {
      this.skipping = true;
      this.parts = [];
      this.size = 0;
      this.onOversize();
      return;
    }
    this.parts.push(piece);
    this.size += piece.length;
  }

  private emit(frames: Buffer[]): void {
    if (this.size === 0) return;
    const frame = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    if (!isBlank(frame)) frames.push(frame);
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function clip(text: string | undefined): string {
  const t = text ?? String(text);
  return t.length > 40 ? `${t.slice(0, 40)}…` : t;
}
