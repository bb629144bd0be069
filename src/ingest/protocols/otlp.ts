/**
 * OTLP logs (an ExportLogsServiceRequest, OTLP/HTTP in protobuf or JSON) → one plain JSON
 * record per LogRecord, which normaliseRecord then turns into an event like any other.
 * Both encodings are read into one model (camelCase names, int64 as decimal text, bytes as
 * bytes), and one converter makes the records, so the same request gives the same
 * records whichever way it was sent.
 *
 * Decisions:
 * - `ts` is `timeUnixNano` as a string of ns (the normaliser reads 18–20 digits as ns);
 *   0 or missing → `observedTimeUnixNano`; both missing → no `ts` (receive time). A time
 *   before March 1973 (fewer than 18 digits of ns, which the normaliser would read by
 *   magnitude as another unit) is given as an ISO 8601 string instead.
 * - `severity` from `severityNumber` (1–8 debug, 9–12 info, 13–16 warning, 17–20 error,
 *   21–24 critical), the sender's `severityText` then kept as field `severity_text`.
 *   Without a number in 1–24, `severity` is `severityText` (read like any record's).
 * - Body: a string → `message`; a bool, number or bytes (base64) → `message` as text; a
 *   kvlist → object `body` (fields `body.<key>`); an array → array `body`; none → neither.
 * - Resource: `service.name` → `app`, `host.name` → `host`, every other attribute →
 *   `resource.<key>`. Scope: `scope.name`, `scope.version` (when set), attributes →
 *   `scope.<key>` (`scope.attributes.<key>` when that name is taken by name/version).
 * - `trace_id`, `span_id` as lower-case hex, omitted when empty or all zero;
 *   `trace_flags` (the low 8 bits of `flags`) when non-zero; `event_name` when set.
 * - Log record attributes are top-level keys. One whose name collides with a key set
 *   above (or with an alias that would outrank it, `timestamp` against `ts`) goes under
 *   `attributes.<name>`, so the sender's value is kept and cannot take over a column.
 *   A repeated key keeps its first value, as the normaliser does after flattening.
 * - AnyValue: string, bool, int (a JSON number when a safe integer, else its decimal
 *   text), double (NaN and ±Infinity as text: JSON has no such numbers), bytes (base64),
 *   array, kvlist (object), empty → null. Nesting deeper than 32 levels makes the request
 *   malformed.
 * - OTLP/JSON: lowerCamelCase names (the proto's snake_case names are accepted too, as
 *   protobuf's JSON mapping does), unknown names ignored, `null` as absent, traceId and
 *   spanId as hex, int64 as string or number, enums as integers (or their names), bytes
 *   values as base64. A value of the wrong type makes the whole request malformed
 *   (OtlpRequestError, a 400): nothing of it is stored.
 * - Dropped-attribute counts, schema URLs and entity refs are not kept.
 */
import path from 'node:path';
import protobuf from 'protobufjs';
import { PACKAGE_ROOT } from '../../core/package-root.js';
import { setOwn } from '../../core/record-shape.js';
import { AppError } from '../../errors/errors.js';
import { decodeUtf8Body } from '../parsers/ndjson.js';
import { COLUMN_ALIASES } from '../record-aliases.js';
import { readJsonRequest } from './otlp-json.js';
import {
  type Int64,
  MAX_VALUE_DEPTH,
  type OtlpAnyValue,
  type OtlpEncoding,
  type OtlpKeyValue,
  type OtlpLogRecord,
  type OtlpLogsRequest,
  OtlpRequestError,
  type OtlpResourceLogs,
  type OtlpScopeLogs,
  tooDeep,
} from './otlp-model.js';
import { checkProtobufBudget, MESSAGES_PER_RECORD } from './protobuf-budget.js';

/** Deepest message nesting walked before decoding: protobufjs's own recursion limit. */
const PROTOBUF_MAX_DEPTH = 100;

// ---------------------------------------------------------------------------------------
// Protobuf

/** The vendored .proto files. */
const PROTO_DIR = path.join(PACKAGE_ROOT, 'proto', 'otel');
const SERVICE_PROTO = 'opentelemetry/proto/collector/logs/v1/logs_service.proto';
const SERVICE_PACKAGE = 'opentelemetry.proto.collector.logs.v1';

export interface OtlpTypes {
  request: protobuf.Type;
  response: protobuf.Type;
  record: protobuf.Type;
}

let loaded: Promise<OtlpTypes> | undefined;

/** The request and response types, loaded from the .proto files on first use (and cached). */
export function otlpTypes(): Promise<OtlpTypes> {
  if (loaded) return loaded;
  const root = new protobuf.Root();
  // Imports name files relative to the folder the proto tree starts in.
  root.resolvePath = (_origin, target) => (path.isAbsolute(target) ? target : path.join(PROTO_DIR, target));
  const pending = root.load(SERVICE_PROTO, { keepCase: false }).then((r) => {
    r.resolveAll();
    return {
      request: r.lookupType(`${SERVICE_PACKAGE}.ExportLogsServiceRequest`),
      response: r.lookupType(`${SERVICE_PACKAGE}.ExportLogsServiceResponse`),
      record: r.lookupType('opentelemetry.proto.logs.v1.LogRecord'),
    };
  });
  loaded = pending;
  // A failed load (files missing) is tried again on the next request.
  pending.catch(() => {
    if (loaded === pending) loaded = undefined;
  });
  return pending;
}

/** google.rpc.Status without `details` (we send none; readers ignore what they lack). */
const StatusType = new protobuf.Type('Status')
  .add(new protobuf.Field('code', 1, 'int32'))
  .add(new protobuf.Field('message', 2, 'string'));
new protobuf.Root().define('google.rpc').add(StatusType);

/**
 * The wire checked, then decoded. Every failure of either is the body's: a 400 naming
 * it, whatever protobufjs threw; only the record cap is another answer (its 413).
 */
function decodeProtobuf(body: Uint8Array, types: OtlpTypes, maxRecords: number): OtlpLogsRequest {
  const type = types.request;
  try {
    // Counted on the wire first: a body of empty records decodes to an object per two bytes.
    checkProtobufBudget(body, type, budgetOf(types, maxRecords));
    // Fields present on the wire only; int64 as exact decimal text; bytes stay bytes.
    return type.toObject(type.decode(body), {
      longs: String,
      enums: Number,
      defaults: false,
    }) as OtlpLogsRequest;
  } catch (error) {
    throw bodyError(error);
  }
}

const budgetOf = (types: OtlpTypes, maxRecords: number) => ({
  record: types.record,
  maxRecords,
  maxMessages: maxRecords * MESSAGES_PER_RECORD,
  maxDepth: PROTOBUF_MAX_DEPTH,
});

/** The record cap's 413 as it is; anything else the wire or the decoder threw is a 400. */
function bodyError(error: unknown): Error {
  if (error instanceof AppError) return error;
  return new OtlpRequestError(
    `Request body is not a protobuf ExportLogsServiceRequest: ${error instanceof Error ? error.message : String(error)}`,
  );
}

/**
 * The budget checked on the first bytes of a protobuf body while it arrives: a small
 * compressed body that inflates to 64 MiB of empty records is refused after its first
 * megabyte, not once it has all inflated.
 */
export async function otlpPrefixCheck(maxRecords: number): Promise<(prefix: Uint8Array) => void> {
  const types = await otlpTypes();
  const budget = budgetOf(types, maxRecords);
  return (prefix) => {
    try {
      checkProtobufBudget(prefix, types.request, budget, true);
    } catch (error) {
      throw bodyError(error);
    }
  };
}

/** Reads a request body in the given encoding; OtlpRequestError when it is not one. */
export async function decodeOtlpLogs(
  body: Uint8Array,
  encoding: OtlpEncoding,
  maxRecords: number,
): Promise<OtlpLogsRequest> {
  if (encoding === 'protobuf') return decodeProtobuf(body, await otlpTypes(), maxRecords);
  const text = decodeUtf8Body(body);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new OtlpRequestError(
      `Request body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return readJsonRequest(json);
}

/** What a partial success reports: records refused, and why. */
export interface OtlpPartialSuccess {
  rejectedLogRecords: number;
  errorMessage: string;
}

/** The ExportLogsServiceResponse as OTLP/JSON. */
export const exportResponseJson = (partial?: OtlpPartialSuccess) =>
  partial ? { partialSuccess: partial } : {};

/** The ExportLogsServiceResponse in the given encoding (protobuf bytes, or a JSON object). */
export async function encodeExportResponse(
  encoding: OtlpEncoding,
  partial?: OtlpPartialSuccess,
): Promise<Buffer | ReturnType<typeof exportResponseJson>> {
  if (encoding === 'json') return exportResponseJson(partial);
  const { response } = await otlpTypes();
  return Buffer.from(response.encode(response.fromObject(exportResponseJson(partial))).finish());
}

/** google.rpc.Status codes used for failures (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, ...). */
export function grpcCodeOf(httpStatus: number): number {
  if (httpStatus === 413 || httpStatus === 429 || httpStatus === 507) return 8;
  if (httpStatus === 503) return 14;
  if (httpStatus >= 500) return 13;
  return 3;
}

/** A google.rpc.Status in the given encoding: protobuf bytes, or its JSON text. */
export function encodeStatus(encoding: OtlpEncoding, code: number, message: string): Buffer | string {
  if (encoding === 'json') return JSON.stringify({ code, message });
  return Buffer.from(StatusType.encode(StatusType.create({ code, message })).finish());
}

/** Decodes a protobuf google.rpc.Status (for tests and clients of this module). */
export function decodeStatus(bytes: Uint8Array): { code: number; message: string } {
  const status = StatusType.toObject(StatusType.decode(bytes), { defaults: true });
  return { code: Number(status.code), message: String(status.message) };
}

/** LogRecords in a request, counted before anything is converted (for the records cap). */
export function countLogRecords(request: OtlpLogsRequest): number {
  let n = 0;
  for (const rl of request.resourceLogs ?? [])
    for (const sl of rl.scopeLogs ?? []) n += sl.logRecords?.length ?? 0;
  return n;
}

// ---------------------------------------------------------------------------------------
// Records

type Value = string | number | boolean | null | Value[] | { [key: string]: Value };

/** Assignment that keeps the first value of a repeated key (and treats `__proto__` as a key). */
function putFirst(target: Record<string, unknown>, key: string, value: unknown): void {
  if (!Object.hasOwn(target, key)) setOwn(target, key, value);
}

function anyValue(v: OtlpAnyValue | undefined, depth: number): Value {
  if (depth > MAX_VALUE_DEPTH) throw tooDeep();
  if (v === undefined || v === null) return null;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) {
    const n = Number(v.intValue);
    return Number.isSafeInteger(n) ? n : String(v.intValue);
  }
  if (v.doubleValue !== undefined) {
    const d = Number(v.doubleValue);
    return Number.isFinite(d) ? d : String(d);
  }
  if (v.bytesValue !== undefined) return Buffer.from(v.bytesValue).toString('base64');
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map((e) => anyValue(e, depth + 1));
  if (v.kvlistValue !== undefined) return keyValues(v.kvlistValue.values, depth + 1);
  return null;
}

function keyValues(list: OtlpKeyValue[] | undefined, depth: number): { [key: string]: Value } {
  const out: { [key: string]: Value } = {};
  for (const kv of list ?? []) putFirst(out, kv.key ?? '', anyValue(kv.value, depth));
  return out;
}

const SEVERITY_BY_GROUP = ['debug', 'debug', 'info', 'warning', 'error', 'critical'] as const;

/** The severity name for an OTLP SeverityNumber (1–24); undefined for 0 and unknown values. */
export function severityOfNumber(n: number | undefined): string | undefined {
  if (n === undefined || !Number.isInteger(n) || n < 1 || n > 24) return undefined;
  return SEVERITY_BY_GROUP[Math.floor((n - 1) / 4)];
}

/** Shortest ns text that means an epoch in ns to the normaliser (18 digits: March 1973). */
const NS_DIGITS = 18;

/** `ts` for a time in ns (decimal text); undefined for 0. */
function timeOf(ns: Int64 | undefined): string | undefined {
  if (ns === undefined) return undefined;
  const text = String(ns).replace(/^0+/, '');
  if (text === '' || text.startsWith('-')) return undefined;
  if (text.length >= NS_DIGITS) return text;
  return new Date(Number(BigInt(text) / 1_000_000n)).toISOString();
}

function hexId(bytes: Uint8Array | undefined): string | undefined {
  if (!bytes || bytes.length === 0 || bytes.every((b) => b === 0)) return undefined;
  return Buffer.from(bytes).toString('hex');
}

/**
 * Aliases that would outrank a key the converter sets (`@timestamp` and `timestamp`
 * outrank `ts`): an attribute of that name would take the column over, so it counts as a
 * collision with the key.
 */
const OUTRANKS = new Map<string, string>();
for (const [column, key] of [
  ['ts', 'ts'],
  ['message', 'message'],
  ['severity', 'severity'],
  ['app', 'app'],
  ['host', 'host'],
] as const) {
  const aliases: readonly string[] = COLUMN_ALIASES[column];
  for (const alias of aliases.slice(0, aliases.indexOf(key))) OUTRANKS.set(alias, key);
}

/** Keys of a record made from the resource and scope, shared by their log records. */
type Head = Array<[string, unknown]>;

function resourceHead(resource: OtlpResourceLogs['resource']): Head {
  const head: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const kv of resource?.attributes ?? []) {
    const key = kv.key ?? '';
    const value = anyValue(kv.value, 0);
    if (key === 'service.name' && value !== null && !Object.hasOwn(head, 'app')) head.app = value;
    else if (key === 'host.name' && value !== null && !Object.hasOwn(head, 'host')) head.host = value;
    else putFirst(rest, `resource.${key}`, value);
  }
  return [...Object.entries(head), ...Object.entries(rest)];
}

function scopeHead(scope: OtlpScopeLogs['scope']): Head {
  const head: Record<string, unknown> = {};
  if (scope?.name) head['scope.name'] = scope.name;
  if (scope?.version) head['scope.version'] = scope.version;
  for (const kv of scope?.attributes ?? []) {
    const key = `scope.${kv.key ?? ''}`;
    putFirst(
      head,
      Object.hasOwn(head, key) ? `scope.attributes.${kv.key ?? ''}` : key,
      anyValue(kv.value, 0),
    );
  }
  return Object.entries(head);
}

function logRecord(lr: OtlpLogRecord, heads: Head[]): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  const ts = timeOf(lr.timeUnixNano) ?? timeOf(lr.observedTimeUnixNano);
  if (ts !== undefined) record.ts = ts;
  const severity = severityOfNumber(lr.severityNumber);
  if (severity !== undefined) {
    record.severity = severity;
    if (lr.severityText) record.severity_text = lr.severityText;
  } else if (lr.severityText) record.severity = lr.severityText;
  const body = anyValue(lr.body, 0);
  if (typeof body === 'string') record.message = body;
  else if (Array.isArray(body) || (typeof body === 'object' && body !== null)) record.body = body;
  else if (body !== null) record.message = String(body);
  for (const head of heads) for (const [key, value] of head) putFirst(record, key, value);
  const traceId = hexId(lr.traceId);
  const spanId = hexId(lr.spanId);
  const traceFlags = (lr.flags ?? 0) & 0xff;
  if (traceId !== undefined) record.trace_id = traceId;
  if (spanId !== undefined) record.span_id = spanId;
  if (traceFlags !== 0) record.trace_flags = traceFlags;
  if (lr.eventName) record.event_name = lr.eventName;
  // Keys set so far are the converter's: an attribute of such a name moves aside; a
  // repeated attribute keeps its first value.
  const ours = new Set(Object.keys(record));
  for (const kv of lr.attributes ?? []) {
    const key = kv.key ?? '';
    const outranked = OUTRANKS.get(key);
    const taken = ours.has(key) || (outranked !== undefined && ours.has(outranked));
    putFirst(record, taken ? `attributes.${key}` : key, anyValue(kv.value, 0));
  }
  return record;
}

/**
 * One plain JSON record per LogRecord, in request order, for normaliseRecord. Throws
 * OtlpRequestError for values nested too deeply (the protobuf decoder does not limit it).
 */
export function otlpLogRecords(request: OtlpLogsRequest): Record<string, unknown>[] {
  const records: Record<string, unknown>[] = [];
  for (const rl of request.resourceLogs ?? []) {
    const resource = resourceHead(rl.resource);
    for (const sl of rl.scopeLogs ?? []) {
      const heads = [resource, scopeHead(sl.scope)];
      for (const lr of sl.logRecords ?? []) records.push(logRecord(lr, heads));
    }
  }
  return records;
}
