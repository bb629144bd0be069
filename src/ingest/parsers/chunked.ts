/**
 * Large ingest bodies in bounded pieces (issue 12). A body is first *planned*: one cheap
 * pass over the bytes counts its records (refusing the request with 413 as soon as the
 * count passes the cap, before anything is parsed or stored), checks what would make the
 * whole request a 400, and cuts it into pieces of at most `pieceRecords` records or about
 * `pieceBytes` bytes. The pieces are then parsed one at a time, so the parsed records of
 * the whole body never exist at once. Every pass yields to the event loop regularly, so
 * other requests (health checks above all) are answered meanwhile.
 */
import { isUtf8 } from 'node:buffer';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { AppError } from '../../errors/errors.js';
import { decodeUtf8Body, IngestBodyError, type ParsedEntry, parseJsonBody } from './ndjson.js';
import { parseNdjsonBytes } from './ndjson-bytes.js';

export interface PieceLimits {
  /** Most records a request may hold; beyond it 413 and nothing is stored. */
  maxRecords: number;
  /** Most records per piece. */
  pieceRecords: number;
  /** A piece is closed once it holds this many bytes (a record is never split). */
  pieceBytes: number;
}

/** Piece sizes: small enough that parsing and normalising one takes tens of ms. */
export const PIECE_RECORDS = 5000;
export const PIECE_BYTES = 1 << 20;

/** A body cut into pieces, each parsed on demand. */
export interface PiecePlan {
  /** Records in the body (NDJSON: non-blank lines; JSON: array elements). */
  records: number;
  pieces: Array<() => ParsedEntry[]>;
}

/** The 413 for a request with more records than the cap allows. */
export function tooManyRecords(maxRecords: number): AppError {
  return new AppError(
    413,
    'too_many_records',
    `Request holds more than ${maxRecords} records (setting ingestMaxRecords); send them in several requests.`,
  );
}

/** Lines between two turns of the event loop while scanning. */
const SCAN_LINES_PER_TURN = 20_000;
/** Bytes between two turns of the event loop while scanning a JSON array. */
const SCAN_BYTES_PER_TURN = 4 << 20;

const isBlankByte = (b: number) => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0b || b === 0x0c;

function blankBytes(bytes: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (!isBlankByte(bytes[i]!)) return false;
  return true;
}

const hasBom = (bytes: Buffer) => bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;

/**
 * NDJSON: counts non-blank lines (413 past `maxRecords`) and cuts the body at line ends.
 * Per-line problems (bad JSON, bad UTF-8) stay per-record rejections, found when a piece
 * is parsed. A body without records is a 400.
 */
export async function planNdjson(bytes: Buffer, limits: PieceLimits): Promise<PiecePlan> {
  const pieces: PiecePlan['pieces'] = [];
  let records = 0;
  let pos = hasBom(bytes) ? 3 : 0;
  let line = 0;
  let pieceStart = pos;
  let pieceLine = 1;
  let pieceIndex = 0;
  let pieceRecords = 0;
  let sinceTurn = 0;
  const close = (end: number, nextLine: number) => {
    if (pieceRecords > 0) {
      const [start, firstLine, firstIndex] = [pieceStart, pieceLine, pieceIndex];
      pieces.push(() => parseNdjsonBytes(bytes.subarray(start, end), firstLine, firstIndex));
    }
    pieceStart = end;
    pieceLine = nextLine;
    pieceIndex = records;
    pieceRecords = 0;
  };
  while (pos < bytes.length) {
    let end = bytes.indexOf(10, pos);
    if (end === -1) end = bytes.length;
    line++;
    if (!blankBytes(bytes, pos, end)) {
      if (++records > limits.maxRecords) throw tooManyRecords(limits.maxRecords);
      pieceRecords++;
    }
    pos = end + 1;
    if (pieceRecords >= limits.pieceRecords || pos - pieceStart >= limits.pieceBytes) {
      close(Math.min(pos, bytes.length), line + 1);
    }
    if (++sinceTurn >= SCAN_LINES_PER_TURN) {
      sinceTurn = 0;
      await nextTurn();
    }
  }
  close(bytes.length, line + 1);
  if (records === 0) throw new IngestBodyError('parse_error', 'Request body holds no records.');
  return { records, pieces };
}

/**
 * A JSON body: an array gives one record per element, anything else one record. A body
 * of at most one piece is parsed at once, as before. A larger array is scanned for its
 * top-level elements (count, framing), then each piece is parsed once to check it is JSON
 * — the whole body must be valid before the first record is stored, since a body that
 * is not JSON is a 400 — and parsed again, piece by piece, when it is stored.
 */
export async function planJson(bytes: Buffer, limits: PieceLimits): Promise<PiecePlan> {
  if (!isUtf8(bytes)) decodeUtf8Body(bytes); // throws, naming the first bad byte
  let first = hasBom(bytes) ? 3 : 0;
  while (first < bytes.length && isBlankByte(bytes[first]!)) first++;
  if (bytes.length <= limits.pieceBytes || bytes[first] !== 0x5b /* [ */) {
    const entries = parseJsonBody(decodeUtf8Body(bytes));
    if (entries.length > limits.maxRecords) throw tooManyRecords(limits.maxRecords);
    return { records: entries.length, pieces: [() => entries] };
  }
  const ranges = await scanJsonArray(bytes, first, limits);
  const records = ranges.reduce((n, r) => n + r.count, 0);
  const pieces = ranges.map((r) => () => parseArrayPiece(bytes, r));
  if (pieces.length > 1) {
    for (const piece of pieces) {
      piece();
      await nextTurn();
    }
  }
  return { records, pieces };
}

interface ArrayPiece {
  start: number;
  end: number;
  count: number;
  firstIndex: number;
}

const pieceDecoder = new TextDecoder('utf-8', { fatal: true });

/** The elements of one piece: its bytes (elements and the commas between) as an array. */
function parseArrayPiece(bytes: Buffer, piece: ArrayPiece): ParsedEntry[] {
  let values: unknown;
  try {
    values = JSON.parse(`[${pieceDecoder.decode(bytes.subarray(piece.start, piece.end))}]`);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new IngestBodyError(
      'parse_error',
      `Request body is not valid JSON: ${detail} (in records ${piece.firstIndex} to ${piece.firstIndex + piece.count - 1})`,
    );
  }
  if (!Array.isArray(values) || values.length !== piece.count) {
    throw new IngestBodyError(
      'parse_error',
      `Request body is not valid JSON: unexpected structure near byte ${piece.start}`,
    );
  }
  return values.map((value, k) => ({ index: piece.firstIndex + k, value }));
}

function framingError(message: string, at: number): IngestBodyError {
  return new IngestBodyError('parse_error', `Request body is not valid JSON: ${message} at byte ${at}`);
}

/**
 * Finds the top-level elements of the JSON array starting at `open` (strings and nesting
 * tracked, nothing parsed) and groups them into pieces. Refuses with 413 as soon as the
 * element count passes the cap.
 */
async function scanJsonArray(bytes: Buffer, open: number, limits: PieceLimits): Promise<ArrayPiece[]> {
  const n = bytes.length;
  const pieces: ArrayPiece[] = [];
  let count = 0;
  let piece: ArrayPiece | null = null;
  let i = open + 1;
  let turnAt = i + SCAN_BYTES_PER_TURN;
  const skipBlank = () => {
    while (i < n && isBlankByte(bytes[i]!)) i++;
  };
  skipBlank();
  if (bytes[i] === 0x5d /* ] */) {
    i++;
    skipBlank();
    if (i < n) throw framingError('unexpected data after the array', i);
    return [];
  }
  for (;;) {
    skipBlank();
    if (i >= n) throw framingError('unexpected end of input', i);
    const start = i;
    let depth = 0;
    while (i < n) {
      const c = bytes[i]!;
      if (c === 0x22 /* " */) {
        // To the closing quote: one not preceded by an odd run of backslashes.
        let j = i;
        for (;;) {
          j = bytes.indexOf(0x22, j + 1);
          if (j === -1) throw framingError('unterminated string', i);
          let slashes = 0;
          while (bytes[j - 1 - slashes] === 0x5c) slashes++;
          if (slashes % 2 === 0) break;
        }
        i = j + 1;
        continue;
      }
      if (c === 0x7b || c === 0x5b) depth++;
      else if (c === 0x7d || c === 0x5d) {
        if (depth === 0) break;
        depth--;
      } else if (c === 0x2c && depth === 0) break;
      i++;
    }
    let end = i;
    while (end > start && isBlankByte(bytes[end - 1]!)) end--;
    if (end === start) throw framingError('missing array element', start);
    if (i >= n) throw framingError('unexpected end of input', i);
    if (++count > limits.maxRecords) throw tooManyRecords(limits.maxRecords);
    if (piece === null) piece = { start, end, count: 0, firstIndex: count - 1 };
    piece.end = end;
    piece.count++;
    if (piece.count >= limits.pieceRecords || piece.end - piece.start >= limits.pieceBytes) {
      pieces.push(piece);
      piece = null;
    }
    const c = bytes[i];
    i++;
    if (c === 0x5d /* ] */) break;
    if (c !== 0x2c /* , */) throw framingError(`unexpected "${String.fromCharCode(c ?? 0)}"`, i - 1);
    if (i >= turnAt) {
      turnAt = i + SCAN_BYTES_PER_TURN;
      await nextTurn();
    }
  }
  if (piece) pieces.push(piece);
  skipBlank();
  if (i < n) throw framingError('unexpected data after the array', i);
  return pieces;
}
