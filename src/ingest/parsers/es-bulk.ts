import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ParsedEntry } from './ndjson.js';
/**
 * Elasticsearch `_bulk` intake, so Filebeat, Logstash, Fluent Bit and Vector
 * can ship here unchanged. Only the body format and the response shape are ES's; events
 * are append-only, so `update` and `delete` are answered per item with an ES-style error
 * (shippers then log and drop that item instead of retrying the whole batch).
 *
 * The `_index` of an action is kept on the event as the field `es_index` (and a client
 * `_id` as `es_id`): shippers encode the data stream or the date in it, and people filter
 * by it. The event still gets our own `ev_id`; the response reports that id as `_id`, so
 * a shipper's log line leads to `GET /api/events/{ev_id}`.
 */

export const ES_BULK_ACTIONS = ['index', 'create', 'update', 'delete'] as const;
export type EsBulkActionName = (typeof ES_BULK_ACTIONS)[number];

/** Index name reported when neither the action nor the URL names one. */
export const DEFAULT_ES_INDEX = 'logscope';

export const ES_INDEX_FIELD = 'es_index';
export const ES_ID_FIELD = 'es_id';

/** One action of a bulk body, in body order. */
export interface EsBulkItem {
  action: EsBulkActionName;
  /** 1-based line of the action line, for messages. */
  line: number;
  index?: string;
  /** The client's `_id`, if it sent one. */
  id?: string;
  /** The document line, parsed (index and create only). */
  doc?: unknown;
  /** Why this item is refused (ES `reason`); absent when the item can be ingested. */
  error?: string;
  /** ES exception type for `error`. */
  errorType?: string;
}

/**
 * The body cannot be split into items (an action line that is not an action), so ES
 * fails the whole request with 400; render it with buildEsErrorBody.
 */
export class EsBulkRequestError extends Error {
  override name = 'EsBulkRequestError';
  readonly status = 400;
  constructor(
    readonly type: string,
    reason: string,
  ) {
    super(reason);
  }
}

export interface ParseEsBulkOptions {
  /** The `{index}` of `/{index}/_bulk`, used when an action has no `_index`. */
  defaultIndex?: string;
}

/**
 * Splits a bulk body into items. Blank lines between actions are skipped; the line after
 * `index`/`create`/`update` is always taken as that action's document, as ES does. Throws
 * EsBulkRequestError for an action line that is not one, since the lines after it could
 * no longer be told apart as actions or documents.
 */
export function parseEsBulk(text: string, options: ParseEsBulkOptions = {}): EsBulkItem[] {
  const lines = text.split('\n');
  const items: EsBulkItem[] = [];
  let i = 0;
  while (i < lines.length) {
    const lineNo = i + 1;
    const actionLine = stripCr(lines[i]!);
    i++;
    if (actionLine.trim() === '') continue;
    const { action, meta } = parseActionLine(actionLine, lineNo);
    const item: EsBulkItem = { action, line: lineNo };
    const index = metaString(meta._index) ?? options.defaultIndex;
    if (index !== undefined) item.index = index;
    const id = metaString(meta._id);
    if (id !== undefined) item.id = id;
    items.push(item);

    if (action === 'delete') {
      refuse(item, 'illegal_argument_exception', 'delete is not supported: events are append-only');
      continue;
    }
    const docLine = i < lines.length ? stripCr(lines[i]!) : undefined;
    // A body ending in "\n" splits into a last "" that is not a document line.
    const hasDoc = docLine !== undefined && !(i === lines.length - 1 && docLine === '');
    if (hasDoc) i++;
    if (action === 'update') {
      refuse(item, 'illegal_argument_exception', 'update is not supported: events are append-only');
      continue;
    }
    if (!hasDoc) {
      refuse(
        item,
        'action_request_validation_exception',
        `document missing after ${action} action on line ${lineNo}`,
      );
      continue;
    }
    try {
      item.doc = JSON.parse(docLine);
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      refuse(item, 'mapper_parsing_exception', `failed to parse document on line ${lineNo + 1}: ${detail}`);
    }
  }
  return items;
}

/** An item of a planned body: its document line is parsed only when its piece is. */
interface PlannedItem extends EsBulkItem {
  docStart?: number;
  docEnd?: number;
}

/** A bulk body cut into pieces of items (see parsers/chunked.ts). */
export interface EsBulkPlan {
  items: EsBulkItem[];
  /** `[from, to)` ranges of `items`; parse each with `parsePiece` before ingesting it. */
  pieces: Array<[number, number]>;
  /** Parses the document lines of `items[from, to)` (or refuses the item). */
  parsePiece(from: number, to: number): void;
  /** Drops the parsed documents of `items[from, to)` once they are stored. */
  releasePiece(from: number, to: number): void;
}

export interface EsBulkPlanLimits {
  maxRecords: number;
  pieceRecords: number;
  pieceBytes: number;
}

const isBlankByte = (b: number) => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0b || b === 0x0c;

/**
 * parseEsBulk over raw bytes, in one cheap pass that parses only the action lines: the
 * documents are parsed piece by piece later (`parsePiece`), so a large body never exists
 * as parsed objects all at once. Everything that fails the whole request (an action line
 * that is not one, too many items: 413 as soon as the count passes `maxRecords`) is found
 * here, before anything is stored. The bytes must be valid UTF-8.
 */
export async function planEsBulk(
  bytes: Buffer,
  options: ParseEsBulkOptions,
  limits: EsBulkPlanLimits,
  onTooMany: () => Error,
): Promise<EsBulkPlan> {
  const n = bytes.length;
  const items: PlannedItem[] = [];
  const pieces: Array<[number, number]> = [];
  let pieceFrom = 0;
  let pieceBytes = 0;
  let pos = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  let lineNo = 0;
  let sinceTurn = 0;
  // One line: [start, end) without its "\n" and "\r"; `last`: no "\n" follows it.
  const nextLine = () => {
    let end = bytes.indexOf(10, pos);
    const last = end === -1;
    if (last) end = n;
    const start = pos;
    pos = end + 1;
    lineNo++;
    const contentEnd = end > start && bytes[end - 1] === 0x0d ? end - 1 : end;
    return { start, end: contentEnd, last };
  };
  while (pos < n) {
    const action = nextLine();
    let blank = true;
    for (let k = action.start; k < action.end && blank; k++) blank = isBlankByte(bytes[k]!);
    if (blank) continue;
    const parsed = parseActionLine(bytes.toString('utf8', action.start, action.end), lineNo);
    const item: PlannedItem = { action: parsed.action, line: lineNo };
    const index = metaString(parsed.meta._index) ?? options.defaultIndex;
    if (index !== undefined) item.index = index;
    const id = metaString(parsed.meta._id);
    if (id !== undefined) item.id = id;
    if (items.length >= limits.maxRecords) throw onTooMany();
    items.push(item);
    if (parsed.action === 'delete') {
      refuse(item, 'illegal_argument_exception', 'delete is not supported: events are append-only');
    } else {
      // The line after an action is its document, except the "" after a final "\n".
      const doc = action.last ? undefined : nextLine();
      const hasDoc = doc !== undefined && !(doc.last && doc.end === doc.start);
      if (parsed.action === 'update') {
        refuse(item, 'illegal_argument_exception', 'update is not supported: events are append-only');
      } else if (!hasDoc) {
        refuse(
          item,
          'action_request_validation_exception',
          `document missing after ${parsed.action} action on line ${item.line}`,
        );
      } else {
        item.docStart = doc.start;
        item.docEnd = doc.end;
        pieceBytes += doc.end - doc.start;
      }
    }
    if (items.length - pieceFrom >= limits.pieceRecords || pieceBytes >= limits.pieceBytes) {
      pieces.push([pieceFrom, items.length]);
      pieceFrom = items.length;
      pieceBytes = 0;
    }
    if (++sinceTurn >= 20_000) {
      sinceTurn = 0;
      await nextTurn();
    }
  }
  if (pieceFrom < items.length) pieces.push([pieceFrom, items.length]);
  return {
    items,
    pieces,
    parsePiece(from, to) {
      for (let k = from; k < to; k++) {
        const item = items[k]!;
        if (item.docStart === undefined || item.docEnd === undefined || item.error !== undefined) continue;
        try {
          item.doc = JSON.parse(bytes.toString('utf8', item.docStart, item.docEnd));
        } catch (error) {
          const detail = error instanceof Error ? error.message : String(error);
          refuse(
            item,
            'mapper_parsing_exception',
            `failed to parse document on line ${item.line + 1}: ${detail}`,
          );
        }
      }
    },
    releasePiece(from, to) {
      for (let k = from; k < to; k++) delete items[k]!.doc;
    },
  };
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

function refuse(item: EsBulkItem, type: string, reason: string): void {
  item.error = reason;
  item.errorType = type;
}

function parseActionLine(
  line: string,
  lineNo: number,
): { action: EsBulkActionName; meta: Record<string, unknown> } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new EsBulkRequestError(
      'illegal_argument_exception',
      `Malformed action/metadata line [${lineNo}]: ${detail}`,
    );
  }
  if (!isObject(value)) {
    throw new EsBulkRequestError(
      'illegal_argument_exception',
      `Malformed action/metadata line [${lineNo}], expected START_OBJECT`,
    );
  }
  // The first key is the action; further keys (winston-elasticsearch adds `"attempts":0`)
  // are ignored, as Elasticsearch does.
  const keys = Object.keys(value);
  const action = keys[0];
  if (!isAction(action)) {
    throw new EsBulkRequestError(
      'illegal_argument_exception',
      `Malformed action/metadata line [${lineNo}], expected field [create], [delete], [index] or [update] but found [${action ?? ''}]`,
    );
  }
  const meta = value[action];
  if (!isObject(meta)) {
    throw new EsBulkRequestError(
      'illegal_argument_exception',
      `Malformed action/metadata line [${lineNo}], expected START_OBJECT after [${action}]`,
    );
  }
  return { action, meta };
}

function isAction(name: string | undefined): name is EsBulkActionName {
  return (ES_BULK_ACTIONS as readonly (string | undefined)[]).includes(name);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** ES accepts numeric `_id`s and treats them as strings. */
function metaString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/**
 * The entry to normalise for an ingestible item: its document as sent, with the action's
 * `_index`/`_id` as intake metadata (`es_index`/`es_id` fields that `raw` leaves out:
 * the shipper never sent them inside the document). A document that has a key of that
 * name keeps its own value. Documents that are not objects pass through for
 * normaliseRecord to reject.
 */
export function esBulkItemEntry(item: EsBulkItem, index: number): ParsedEntry {
  const meta: Record<string, string> = {};
  if (item.index !== undefined) meta[ES_INDEX_FIELD] = item.index;
  if (item.id !== undefined) meta[ES_ID_FIELD] = item.id;
  return { index, value: item.doc, ...(Object.keys(meta).length ? { meta } : {}) };
}

export interface EsError {
  type: string;
  reason: string;
}

/** What happened to one item, for the response. */
export interface EsBulkOutcome {
  action: EsBulkActionName;
  index?: string;
  /** The stored event's `ev_id`, or for a failure the client's `_id` if any. */
  id?: string;
  /** HTTP-style status of the item: 201 stored, 400 refused, 429 try again. */
  status: number;
  error?: EsError;
}

/** Outcome for an item that was stored as event `evId`. */
export function esBulkCreated(item: EsBulkItem, evId: string): EsBulkOutcome {
  return withIndex(item, { action: item.action, id: evId, status: 201 });
}

/**
 * Outcome for an item that was refused: by the parser (pass only the item) or later, for
 * example by normalisation (pass the reason; the type defaults to mapper_parsing_exception,
 * which is what ES answers for a document it cannot take).
 */
export function esBulkFailed(item: EsBulkItem, reason?: string, type?: string, status = 400): EsBulkOutcome {
  const outcome: EsBulkOutcome = {
    action: item.action,
    status,
    error: {
      type: type ?? item.errorType ?? 'mapper_parsing_exception',
      reason: reason ?? item.error ?? 'document refused',
    },
  };
  if (item.id !== undefined) outcome.id = item.id;
  return withIndex(item, outcome);
}

function withIndex(item: EsBulkItem, outcome: EsBulkOutcome): EsBulkOutcome {
  if (item.index !== undefined) outcome.index = item.index;
  return outcome;
}

export interface EsBulkResponseItem {
  _index: string;
  _id: string | null;
  _version?: number;
  result?: 'created';
  status: number;
  error?: EsError;
}

export interface EsBulkResponse {
  took: number;
  errors: boolean;
  items: Partial<Record<EsBulkActionName, EsBulkResponseItem>>[];
}

/** The `_bulk` response: one item per action, in request order, keyed by the action. */
export function buildEsBulkResponse(
  outcomes: readonly EsBulkOutcome[],
  tookMs: number,
  defaultIndex = DEFAULT_ES_INDEX,
): EsBulkResponse {
  let errors = false;
  const items = outcomes.map((outcome) => {
    const ok = outcome.status >= 200 && outcome.status < 300 && outcome.error === undefined;
    if (!ok) errors = true;
    const entry: EsBulkResponseItem = {
      _index: outcome.index ?? defaultIndex,
      _id: outcome.id ?? null,
      status: outcome.status,
    };
    if (ok) {
      entry._version = 1;
      entry.result = 'created';
    } else {
      entry.error = outcome.error ?? { type: 'exception', reason: `status ${outcome.status}` };
    }
    return { [outcome.action]: entry };
  });
  return { took: Math.max(0, Math.round(tookMs)), errors, items };
}

/** ES's shape for a whole-request error (`{error: {root_cause, type, reason}, status}`). */
export function buildEsErrorBody(
  type: string,
  reason: string,
  status = 400,
): { error: EsError & { root_cause: EsError[] }; status: number } {
  return { error: { root_cause: [{ type, reason }], type, reason }, status };
}
