/**
 * Body parsers for `POST /api/ingest`: a JSON object, a JSON array, or NDJSON.
 * They only split and parse; whether a value is an acceptable record is normaliseRecord's
 * call, so a body of `[1, {...}]` yields two entries and the first is rejected alone.
 */
import { AppError } from '../../errors/errors.js';

/** One record position in a body: its parsed value, or why it could not be parsed. */
export interface ParsedEntry {
  /** 0-based position among the body's records (blank NDJSON lines do not count). */
  index: number;
  /** 1-based line number in an NDJSON body; absent for JSON bodies. */
  line?: number;
  value?: unknown;
  error?: string;
  /**
   * Fields the intake adds that the sender did not put in the record (the `_index` of an
   * Elasticsearch bulk action): stored, but left out of `raw`.
   */
  meta?: Readonly<Record<string, string>>;
}

/** The whole body is unusable (not JSON, not UTF-8): a 400, not a per-record rejection. */
export class IngestBodyError extends AppError {
  override name = 'IngestBodyError';
  constructor(code: 'parse_error' | 'invalid_encoding', message: string) {
    super(400, code, message);
  }
}

/**
 * One entry per non-blank line. A line that is not JSON becomes an error entry naming the
 * line, so one bad line rejects only itself. CRLF line ends and a leading BOM are accepted.
 * `firstLine`/`firstIndex` number a piece of a larger body (its first line and record).
 */
export function parseNdjson(text: string, firstLine = 1, firstIndex = 0): ParsedEntry[] {
  const entries: ParsedEntry[] = [];
  const lines = stripBom(text).split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    const index = firstIndex + entries.length;
    const lineNo = firstLine + i;
    try {
      entries.push({ index, line: lineNo, value: JSON.parse(line) });
    } catch (error) {
      entries.push({ index, line: lineNo, error: `line ${lineNo}: invalid JSON (${jsonErrorText(error)})` });
    }
  }
  return entries;
}

/**
 * A JSON body: an array gives one entry per element, anything else one entry. Throws
 * IngestBodyError when the body is not JSON at all, since no record can be told apart then.
 */
export function parseJsonBody(text: string): ParsedEntry[] {
  const body = stripBom(text);
  if (body.trim() === '') throw new IngestBodyError('parse_error', 'Request body is empty.');
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    throw new IngestBodyError('parse_error', `Request body is not valid JSON: ${jsonErrorText(error)}`);
  }
  if (Array.isArray(value)) return value.map((element, index) => ({ index, value: element }));
  return [{ index: 0, value }];
}

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function jsonErrorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes a request body, refusing invalid UTF-8 instead of silently replacing bytes
 * (replacement would store text the sender never wrote). A leading BOM is dropped.
 * Throws IngestBodyError naming the offset of the first bad byte.
 */
export function decodeUtf8Body(bytes: Uint8Array): string {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    const offset = findInvalidUtf8(bytes);
    throw new IngestBodyError(
      'invalid_encoding',
      `Request body is not valid UTF-8 (first invalid byte at offset ${offset}).`,
    );
  }
}

/** True when the bytes are well-formed UTF-8. */
export function isValidUtf8(bytes: Uint8Array): boolean {
  return findInvalidUtf8(bytes) === -1;
}

/**
 * Offset of the first byte that is not part of a well-formed UTF-8 sequence (Unicode
 * table 3-7: no overlongs, no surrogates, nothing above U+10FFFF), or -1 when all are.
 */
export function findInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let length: number;
    let min = 0x80;
    let max = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) min = 0xa0;
      if (b === 0xed) max = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) min = 0x90;
      if (b === 0xf4) max = 0x8f;
    } else return i;
    // The first continuation byte carries the overlong/surrogate/range limits.
    const second = bytes[i + 1];
    if (second === undefined || second < min || second > max) return i;
    for (let k = 2; k < length; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < 0x80 || c > 0xbf) return i;
    }
    i += length;
  }
  return -1;
}
