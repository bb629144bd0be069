/**
 * Loki push bodies (`POST /loki/api/v1/push`) decoded into plain JSON records for
 * normaliseRecord. Two encodings, one result: `application/x-protobuf` (a logproto
 * PushRequest, snappy block-compressed, as Promtail, Grafana Alloy and winston-loki send
 * by default) and `application/json` (`{"streams": [{"stream": {label: value}, "values":
 * [["<unix ns>", "<line>", {metadata}]]}]}`). Both decoders produce the same LokiStream
 * list, and lokiRecords turns that into records, so a push means the same whichever way
 * it was encoded.
 *
 * Decisions worth knowing before reading the code:
 * - All or nothing: the whole body is decoded and checked (snappy, protobuf, JSON, label
 *   syntax, timestamps, names) before anything is stored. A problem anywhere is a
 *   LokiPushError (400) naming the stream and entry; no entry of that push is stored.
 * - One record per entry: `message` is the line exactly as sent (a JSON line stays a
 *   string: parsing it is a pipeline's job, not the intake's), `ts` the timestamp in
 *   Unix nanoseconds as a decimal string (the normaliser reads 19 digits as ns, keeping
 *   the sub-millisecond digits in `raw`). Then the stream labels, then the entry's
 *   structured metadata, each as a top-level string key, and no other keys. So `host`,
 *   `app`, `service` and `level` labels land in their columns through the normaliser's
 *   aliases, and every other label is a field of the same name.
 * - `service_name` (the label Loki derives and OpenTelemetry senders set) also becomes
 *   `app` when no label or metadata names the app another way (`app`, `service`, ...);
 *   `service_name` itself stays a field, so queries written for Loki still find it.
 * - A name the record needs for itself (`ts`, `message`) or a time alias the normaliser
 *   would prefer to `ts` (`timestamp`, `@timestamp`) is stored as `loki.<name>`. Metadata
 *   that repeats a label with the same value is dropped (winston-loki sends `level` as
 *   both); with another value it is kept as `loki.<name>` (then `loki.<name>.2`, ...):
 *   nothing the sender wrote is lost and no column is taken over by a look-alike.
 * - Labels follow Prometheus: names `[a-zA-Z_][a-zA-Z0-9_]*`, values quoted with the
 *   escapes `\\`, `\"` and `\n` only; a label with an empty value is no label; a stream
 *   needs at least one label and may not repeat a name (Loki refuses both too). The
 *   JSON `stream` object follows the same rules. Metadata names may be any non-empty
 *   text (senders use dotted names); values must be strings, as in Loki.
 * - Timestamps are integers of Unix nanoseconds between 1973-03-03 (10^17 ns) and the
 *   int64 limit (2262). Earlier values are refused rather than guessed: the normaliser
 *   tells epoch units apart by their number of digits, and a zero or missing protobuf
 *   timestamp (a sender bug) must not turn into 1970. JSON timestamps must be strings
 *   of digits, as Loki requires (a JSON number cannot carry ns exactly).
 * - Snappy: block format only (what Loki takes). The length preamble is read before
 *   decompressing, so a body that would inflate past the body limit is refused (413)
 *   without allocating it; the framed (streaming) format is named in its 400.
 */
import path from 'node:path';
import protobuf from 'protobufjs';
import { uncompress } from 'snappy';
import { PACKAGE_ROOT } from '../../core/package-root.js';
import { AppError } from '../../errors/errors.js';
import { MAX_FIELD_NAME_LENGTH, MAX_FIELDS } from '../normalise.js';
import { decodeUtf8Body } from '../parsers/ndjson.js';
import { COLUMN_ALIASES } from '../record-aliases.js';
import { checkProtobufBudget, MESSAGES_PER_RECORD } from './protobuf-budget.js';

/** Label or metadata pairs in the order sent. */
export type LabelPairs = Array<[name: string, value: string]>;

export interface LokiEntry {
  /** Unix time in nanoseconds. */
  ns: bigint;
  line: string;
  metadata: LabelPairs;
}

export interface LokiStream {
  labels: LabelPairs;
  entries: LokiEntry[];
}

/** A record as handed to the normaliser: string values only. */
export type LokiRecord = Record<string, string>;

/** A body that is not a valid Loki push: 400, and nothing of it is stored. */
export class LokiPushError extends AppError {
  override name = 'LokiPushError';
  constructor(message: string) {
    super(400, 'parse_error', message);
  }
}

/** The vendored schema file. */
const PUSH_PROTO = path.join(PACKAGE_ROOT, 'proto', 'loki', 'push.proto');

/** The earliest timestamp taken: 10^17 ns, 1973-03-03T09:46:40Z (18 digits). */
const MIN_NS = 10n ** 17n;
const MAX_NS = 2n ** 63n - 1n;

const LABEL_NAME = /[a-zA-Z_][a-zA-Z0-9_]*/y;
const LABEL_NAME_ONLY = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The first bytes of the framed (streaming) snappy format: its stream identifier chunk. */
const SNAPPY_FRAMED_MAGIC = Buffer.from([0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59]);

/** Names the record needs for itself, or that the normaliser would read as its time before `ts`. */
const RESERVED_NAMES: ReadonlySet<string> = new Set([
  'ts',
  'message',
  ...COLUMN_ALIASES.ts.slice(0, COLUMN_ALIASES.ts.indexOf('ts')),
  ...COLUMN_ALIASES.message.slice(0, COLUMN_ALIASES.message.indexOf('message')),
]);
const APP_ALIASES: readonly string[] = COLUMN_ALIASES.app;
const RENAMED_PREFIX = 'loki.';

const describe = (err: unknown) => (err instanceof Error ? err.message : String(err));
const clip = (text: string) => (text.length > 60 ? `${text.slice(0, 60)}…` : text);
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// ---------------------------------------------------------------- labels

const skipSpace = (text: string, i: number) => {
  while (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r') i++;
  return i;
};

/**
 * Parses a stream's labels in Prometheus syntax, `{a="b", c="d\"e"}`, strictly: label
 * names as Prometheus allows them, double-quoted values with the escapes `\\`, `\"` and
 * `\n`, no repeated name, no trailing comma, nothing after the closing brace. `{}` parses
 * (the stream check refuses it). Throws LokiPushError saying what and where.
 */
export function parseLabels(text: string): LabelPairs {
  const pairs: LabelPairs = [];
  const seen = new Set<string>();
  let i = skipSpace(text, 0);
  const bad = (what: string) =>
    new LokiPushError(`invalid stream labels ${JSON.stringify(clip(text))}: ${what} at offset ${i}`);
  if (text[i] !== '{') throw bad('expected "{"');
  i = skipSpace(text, i + 1);
  if (text[i] !== '}') {
    for (;;) {
      LABEL_NAME.lastIndex = i;
      const name = LABEL_NAME.exec(text)?.[0];
      if (name === undefined) throw bad('expected a label name');
      i = skipSpace(text, i + name.length);
      if (text[i] !== '=') throw bad(`expected "=" after ${name}`);
      i = skipSpace(text, i + 1);
      if (text[i] !== '"') throw bad(`expected a double-quoted value for ${name}`);
      i++;
      let value = '';
      let start = i;
      for (;;) {
        const c = text[i];
        if (c === undefined) throw bad(`unterminated value of ${name}`);
        if (c === '"') break;
        if (c === '\n') throw bad(`line break in the value of ${name} (write it as \\n)`);
        if (c === '\\') {
          const escaped = text[i + 1];
          value += text.slice(start, i);
          if (escaped === '\\' || escaped === '"') value += escaped;
          else if (escaped === 'n') value += '\n';
          else throw bad(`unknown escape "\\${escaped ?? ''}" in the value of ${name}`);
          i += 2;
          start = i;
          continue;
        }
        i++;
      }
      value += text.slice(start, i);
      if (seen.has(name)) throw bad(`label ${name} repeated`);
      seen.add(name);
      pairs.push([name, value]);
      i = skipSpace(text, i + 1);
      if (text[i] === '}') break;
      if (text[i] !== ',') throw bad('expected "," or "}"');
      i = skipSpace(text, i + 1);
    }
  }
  i = skipSpace(text, i + 1);
  if (i < text.length) throw bad('unexpected text after "}"');
  return pairs;
}

/**
 * The labels a stream keeps: names checked (the JSON form has no parser to do it),
 * empty values dropped (Prometheus: an empty label is no label), at least one left.
 */
function streamLabels(pairs: LabelPairs, where: string): LabelPairs {
  const kept: LabelPairs = [];
  for (const [name, value] of pairs) {
    if (!LABEL_NAME_ONLY.test(name)) {
      throw new LokiPushError(
        `${where}: label name ${JSON.stringify(clip(name))} is not valid ([a-zA-Z_][a-zA-Z0-9_]*)`,
      );
    }
    if (value !== '') kept.push([name, value]);
  }
  if (kept.length === 0) throw new LokiPushError(`${where}: a stream needs at least one label`);
  return kept;
}

function metadataName(name: string, where: string): string {
  if (name === '') throw new LokiPushError(`${where}: structured metadata with an empty name`);
  return name;
}

function checkedNs(ns: bigint, where: string): bigint {
  if (ns < MIN_NS || ns > MAX_NS) {
    throw new LokiPushError(
      `${where}: timestamp ${ns} ns is out of range (Unix nanoseconds from 1973-03-03 to 2262-04-11)`,
    );
  }
  return ns;
}

// ---------------------------------------------------------------- protobuf + snappy

interface PbLabelPair {
  name: string;
  value: string;
}
interface PbEntry {
  timestamp?: { seconds: number | { toString(): string }; nanos: number } | null;
  line: string;
  structuredMetadata: PbLabelPair[];
}
interface PbPush {
  streams: Array<{ labels: string; entries: PbEntry[] }>;
}

let pushType: Promise<{ push: protobuf.Type; entry: protobuf.Type }> | undefined;

/** The PushRequest type, loaded once on first use (a failed load is retried next time). */
function lokiPushType(): Promise<{ push: protobuf.Type; entry: protobuf.Type }> {
  pushType ??= protobuf.load(PUSH_PROTO).then(
    (root) => {
      root.resolveAll();
      return {
        push: root.lookupType('logproto.PushRequest'),
        entry: root.lookupType('logproto.EntryAdapter'),
      };
    },
    (err: unknown) => {
      pushType = undefined;
      throw err;
    },
  );
  return pushType;
}

/**
 * The uncompressed length a snappy block states in its preamble (a little-endian base-128
 * varint of at most 32 bits), or null when the body does not start with one.
 */
export function snappyLength(body: Uint8Array): number | null {
  let value = 0;
  for (let i = 0; i < 5 && i < body.length; i++) {
    const byte = body[i]!;
    value += (byte & 0x7f) * 2 ** (7 * i);
    if (byte < 0x80) return value <= 0xffff_ffff ? value : null;
  }
  return null;
}

/**
 * Decodes a snappy-compressed protobuf PushRequest. `maxBytes` bounds the uncompressed
 * size (413 past it, before decompressing).
 */
export async function decodeLokiProtobuf(
  body: Buffer,
  maxBytes: number,
  maxRecords: number,
): Promise<LokiStream[]> {
  if (body.subarray(0, SNAPPY_FRAMED_MAGIC.length).equals(SNAPPY_FRAMED_MAGIC)) {
    throw new LokiPushError('body is framed (streaming) snappy; Loki push takes the snappy block format');
  }
  const size = snappyLength(body);
  if (size === null) throw new LokiPushError('body is not snappy-compressed (no valid length preamble)');
  if (size > maxBytes) {
    throw new AppError(
      413,
      'payload_too_large',
      `Request body decompresses to ${size} bytes, more than the limit of ${maxBytes} (setting ingestBodyLimit).`,
    );
  }
  let raw: Buffer;
  try {
    raw = (await uncompress(body, { asBuffer: true })) as Buffer;
  } catch (err) {
    throw new LokiPushError(`body is not valid snappy (block format): ${describe(err)}`);
  }
  const types = await lokiPushType();
  let push: PbPush;
  try {
    // Counted on the wire first: a body of empty entries decodes to an object per two bytes.
    checkProtobufBudget(raw, types.push, {
      record: types.entry,
      maxRecords,
      maxMessages: maxRecords * MESSAGES_PER_RECORD,
      maxDepth: 8,
    });
    push = types.push.decode(raw) as unknown as PbPush;
  } catch (err) {
    if (err instanceof AppError) throw err; // the record cap: a 413
    throw new LokiPushError(`body is not a Loki PushRequest (protobuf): ${describe(err)}`);
  }
  return push.streams.map((stream, s) => {
    const where = `streams[${s}]`;
    let parsed: LabelPairs;
    try {
      parsed = parseLabels(stream.labels);
    } catch (err) {
      throw err instanceof LokiPushError ? new LokiPushError(`${where}: ${err.message}`) : err;
    }
    const labels = streamLabels(parsed, where);
    const entries = stream.entries.map((entry, e): LokiEntry => {
      const at = `${where}.entries[${e}]`;
      const ts = entry.timestamp;
      if (!ts) throw new LokiPushError(`${at}: entry has no timestamp`);
      if (!Number.isInteger(ts.nanos) || ts.nanos < 0 || ts.nanos > 999_999_999) {
        throw new LokiPushError(`${at}: timestamp nanos ${ts.nanos} is not in 0..999999999`);
      }
      return {
        ns: checkedNs(BigInt(secondsText(ts.seconds, at)) * 1_000_000_000n + BigInt(ts.nanos), at),
        line: entry.line,
        metadata: entry.structuredMetadata.map(({ name, value }) => [metadataName(name, at), value]),
      };
    });
    return { labels, entries };
  });
}

/** int64 seconds as protobufjs gives them (a Long, or a number without long support) in digits. */
function secondsText(seconds: number | { toString(): string }, where: string): string {
  const text = String(seconds);
  if (!/^-?\d+$/.test(text))
    throw new LokiPushError(`${where}: timestamp seconds ${clip(text)} is not an integer`);
  return text;
}

// ---------------------------------------------------------------- JSON

const NS_DIGITS = /^\d{1,25}$/;

/** Decodes a JSON push body (already un-gzipped): UTF-8, then Loki's JSON push shape. */
export function decodeLokiJson(body: Uint8Array): LokiStream[] {
  const text = decodeUtf8Body(body);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new LokiPushError(`body is not valid JSON: ${describe(err)}`);
  }
  if (!isObject(doc) || !Array.isArray(doc.streams)) {
    throw new LokiPushError('body must be a JSON object with a "streams" array');
  }
  return doc.streams.map((stream: unknown, s): LokiStream => {
    const where = `streams[${s}]`;
    if (!isObject(stream)) throw new LokiPushError(`${where} must be an object`);
    const labels = stringPairs(stream.stream, `${where}.stream`, 'an object of label names to strings');
    if (!Array.isArray(stream.values)) throw new LokiPushError(`${where}.values must be an array`);
    return {
      labels: streamLabels(labels, where),
      entries: stream.values.map((value: unknown, e): LokiEntry => {
        const at = `${where}.values[${e}]`;
        if (!Array.isArray(value) || value.length < 2 || value.length > 3) {
          throw new LokiPushError(
            `${at} must be ["<unix ns>", "<line>"] or ["<unix ns>", "<line>", {metadata}]`,
          );
        }
        const [ts, line, metadata] = value as unknown[];
        if (typeof ts !== 'string' || !NS_DIGITS.test(ts)) {
          throw new LokiPushError(
            `${at}: timestamp must be Unix nanoseconds as a string of digits, got ${clip(JSON.stringify(ts))}`,
          );
        }
        if (typeof line !== 'string') throw new LokiPushError(`${at}: the line must be a string`);
        const pairs =
          metadata === undefined
            ? []
            : stringPairs(metadata, `${at}[2]`, 'structured metadata: an object of names to strings');
        return {
          ns: checkedNs(BigInt(ts), at),
          line,
          metadata: pairs.map(([name, v]) => [metadataName(name, at), v]),
        };
      }),
    };
  });
}

function stringPairs(value: unknown, where: string, expected: string): LabelPairs {
  if (!isObject(value)) throw new LokiPushError(`${where} must be ${expected}`);
  const pairs: LabelPairs = [];
  for (const [name, v] of Object.entries(value)) {
    if (typeof v !== 'string') {
      throw new LokiPushError(`${where}.${clip(name)} must be a string, got ${clip(JSON.stringify(v))}`);
    }
    pairs.push([name, v]);
  }
  return pairs;
}

// ---------------------------------------------------------------- records

/** How many entries the streams hold (for the ingestMaxRecords cap). */
export const countEntries = (streams: readonly LokiStream[]): number =>
  streams.reduce((n, s) => n + s.entries.length, 0);

/**
 * One record per entry, in the order sent (see the module's decisions). Throws
 * LokiPushError for an entry the normaliser would refuse (too many fields, a name too
 * long), so that a push is refused whole instead of stored in part.
 */
export function lokiRecords(streams: readonly LokiStream[]): LokiRecord[] {
  const records: LokiRecord[] = [];
  streams.forEach((stream, s) => {
    stream.entries.forEach((entry, e) => {
      // Null prototype: a label or metadata name like `__proto__` is just a key.
      const record: LokiRecord = Object.create(null);
      record.ts = String(entry.ns);
      record.message = entry.line;
      for (const [name, value] of stream.labels) place(record, name, value);
      for (const [name, value] of entry.metadata) place(record, name, value);
      const serviceName = record.service_name;
      if (serviceName !== undefined && !APP_ALIASES.some((alias) => alias in record)) {
        record.app = serviceName;
      }
      const where = `streams[${s}] entry ${e}`;
      let count = 0;
      for (const name in record) {
        count++;
        if (name.length > MAX_FIELD_NAME_LENGTH) {
          throw new LokiPushError(
            `${where}: name ${JSON.stringify(clip(name))} is longer than ${MAX_FIELD_NAME_LENGTH} characters`,
          );
        }
      }
      if (count > MAX_FIELDS) {
        throw new LokiPushError(
          `${where}: ${count} fields with the labels and metadata (limit ${MAX_FIELDS})`,
        );
      }
      records.push(record);
    });
  });
  return records;
}

/** Sets `name`, or `loki.<name>` (numbered if need be) when the name is reserved or taken. */
function place(record: LokiRecord, name: string, value: string): void {
  if (!RESERVED_NAMES.has(name)) {
    const current = record[name];
    if (current === undefined) {
      record[name] = value;
      return;
    }
    if (current === value) return;
  }
  const base = RENAMED_PREFIX + name;
  let key = base;
  for (let n = 2; record[key] !== undefined; n++) {
    if (record[key] === value) return;
    key = `${base}.${n}`;
  }
  record[key] = value;
}
