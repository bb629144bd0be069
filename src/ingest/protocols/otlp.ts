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
import { COLUMN_ALIASES } from '../normalise.js';
import { decodeUtf8Body } from '../parsers/ndjson.js';
import { checkProtobufBudget, MESSAGES_PER_RECORD, ProtobufShapeError } from './protobuf-budget.js';

/** The two OTLP/HTTP encodings, by media type. */
export type OtlpEncoding = 'protobuf' | 'json';

export const OTLP_MEDIA_TYPES: Record<OtlpEncoding, string> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
};

/** A request that cannot be read as an ExportLogsServiceRequest: a 400, nothing stored. */
export class OtlpRequestError extends AppError {
  override name = 'OtlpRequestError';
  constructor(message: string) {
    super(400, 'parse_error', message);
  }
}

/** An int64 as decimal text or a number (JSON senders may use either). */
type Int64 = string | number;

export interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: Int64;
  doubleValue?: number;
  bytesValue?: Uint8Array;
  arrayValue?: { values?: OtlpAnyValue[] };
  kvlistValue?: { values?: OtlpKeyValue[] };
}

export interface OtlpKeyValue {
  key?: string;
  value?: OtlpAnyValue;
}

export interface OtlpLogRecord {
  timeUnixNano?: Int64;
  observedTimeUnixNano?: Int64;
  severityNumber?: number;
  severityText?: string;
  body?: OtlpAnyValue;
  attributes?: OtlpKeyValue[];
  flags?: number;
  traceId?: Uint8Array;
  spanId?: Uint8Array;
  eventName?: string;
}

export interface OtlpScopeLogs {
  scope?: { name?: string; version?: string; attributes?: OtlpKeyValue[] };
  logRecords?: OtlpLogRecord[];
}

export interface OtlpResourceLogs {
  resource?: { attributes?: OtlpKeyValue[] };
  scopeLogs?: OtlpScopeLogs[];
}

/** An ExportLogsServiceRequest as both decoders give it (absent = default). */
export interface OtlpLogsRequest {
  resourceLogs?: OtlpResourceLogs[];
}

/**
 * Deepest nesting of AnyValue arrays and kvlists accepted. Below what protobufjs decodes
 * (100 messages, about 47 value levels), so both encodings refuse the same requests.
 */
export const MAX_VALUE_DEPTH = 32;
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

function decodeProtobuf(body: Uint8Array, types: OtlpTypes, maxRecords: number): OtlpLogsRequest {
  const type = types.request;
  try {
    // Counted on the wire first: a body of empty records decodes to an object per two bytes.
    checkProtobufBudget(body, type, {
      record: types.record,
      maxRecords,
      maxMessages: maxRecords * MESSAGES_PER_RECORD,
      maxDepth: PROTOBUF_MAX_DEPTH,
    });
  } catch (error) {
    if (error instanceof ProtobufShapeError) {
      throw new OtlpRequestError(`Request body is not a protobuf ExportLogsServiceRequest: ${error.message}`);
    }
    throw error;
  }
  let message: protobuf.Message;
  try {
    message = type.decode(body);
  } catch (error) {
    throw new OtlpRequestError(
      `Request body is not a protobuf ExportLogsServiceRequest: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  // Fields present on the wire only; int64 as exact decimal text; bytes stay bytes.
  return type.toObject(message, { longs: String, enums: Number, defaults: false }) as OtlpLogsRequest;
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
// OTLP/JSON

type JsonObject = Record<string, unknown>;

const SNAKE = new Map<string, string>();
/** A field by its lowerCamelCase name or the proto's snake_case name; null reads as absent. */
function field(obj: JsonObject, name: string): unknown {
  let value = Object.hasOwn(obj, name) ? obj[name] : undefined;
  if (value === undefined) {
    let snake = SNAKE.get(name);
    if (snake === undefined) {
      snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
      SNAKE.set(name, snake);
    }
    if (snake !== name && Object.hasOwn(obj, snake)) value = obj[snake];
  }
  return value === null ? undefined : value;
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function invalid(at: string, what: string): never {
  throw new OtlpRequestError(`Invalid OTLP/JSON: ${at} must be ${what}.`);
}

function objectAt(value: unknown, at: string): JsonObject | undefined {
  if (value === undefined) return undefined;
  return isObject(value) ? value : invalid(at, 'an object');
}

function arrayAt(value: unknown, at: string): unknown[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : invalid(at, 'an array');
}

function stringAt(value: unknown, at: string): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'string' ? value : invalid(at, 'a string');
}

const INTEGER_TEXT = /^-?\d+$/;
/** int64/fixed64: a decimal string or an integer number; kept as decimal text. */
function int64At(value: unknown, at: string, unsigned: boolean): string | undefined {
  if (value === undefined) return undefined;
  let text: string | undefined;
  if (typeof value === 'string' && INTEGER_TEXT.test(value.trim())) text = value.trim();
  else if (typeof value === 'number' && Number.isInteger(value)) text = BigInt(value).toString();
  if (text === undefined || (unsigned && text.startsWith('-'))) {
    return invalid(
      at,
      unsigned ? 'a non-negative integer (string or number)' : 'an integer (string or number)',
    );
  }
  return text;
}

/** int32/uint32 (and enums given as numbers): a number or a decimal string. */
function int32At(value: unknown, at: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = typeof value === 'string' && INTEGER_TEXT.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    return invalid(at, `an integer from ${min} to ${max}`);
  }
  return n;
}

const SEVERITY_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'];
const SEVERITY_NAME = /^SEVERITY_NUMBER_(TRACE|DEBUG|INFO|WARN|ERROR|FATAL)([234]?)$/;

function severityNumberAt(value: unknown, at: string): number | undefined {
  if (typeof value === 'string' && !INTEGER_TEXT.test(value.trim())) {
    if (value === 'SEVERITY_NUMBER_UNSPECIFIED') return 0;
    const m = SEVERITY_NAME.exec(value);
    if (!m) return invalid(at, 'a SeverityNumber (an integer)');
    return SEVERITY_LEVELS.indexOf(m[1]!) * 4 + 1 + (m[2] ? Number(m[2]) - 1 : 0);
  }
  return int32At(value, at, -0x80000000, 0x7fffffff);
}

function doubleAt(value: unknown, at: string): number | undefined {
  if (value === undefined || typeof value === 'number') return value;
  if (typeof value === 'string') {
    if (value === 'NaN') return Number.NaN;
    if (value === 'Infinity') return Number.POSITIVE_INFINITY;
    if (value === '-Infinity') return Number.NEGATIVE_INFINITY;
    const n = Number(value);
    if (value.trim() !== '' && Number.isFinite(n)) return n;
  }
  return invalid(at, 'a number');
}

const HEX = /^(?:[0-9a-fA-F]{2})*$/;
function hexBytesAt(value: unknown, at: string): Uint8Array | undefined {
  const text = stringAt(value, at);
  if (text === undefined) return undefined;
  return HEX.test(text) ? Buffer.from(text, 'hex') : invalid(at, 'hex text');
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
function base64BytesAt(value: unknown, at: string): Uint8Array | undefined {
  const text = stringAt(value, at);
  if (text === undefined) return undefined;
  return BASE64.test(text) ? Buffer.from(text, 'base64') : invalid(at, 'base64 text');
}

function readJsonRequest(json: unknown): OtlpLogsRequest {
  const top = isObject(json) ? json : invalid('the body', 'a JSON object (ExportLogsServiceRequest)');
  const resourceLogs = arrayAt(field(top, 'resourceLogs'), 'resourceLogs').map((rl, i) =>
    readResourceLogs(rl, `resourceLogs[${i}]`),
  );
  return { resourceLogs };
}

function readResourceLogs(value: unknown, at: string): OtlpResourceLogs {
  const obj = objectAt(value === null ? {} : value, at)!;
  const out: OtlpResourceLogs = {};
  const resource = objectAt(field(obj, 'resource'), `${at}.resource`);
  if (resource) {
    out.resource = {
      attributes: readKeyValues(field(resource, 'attributes'), `${at}.resource.attributes`, 0),
    };
  }
  out.scopeLogs = arrayAt(field(obj, 'scopeLogs'), `${at}.scopeLogs`).map((sl, i) =>
    readScopeLogs(sl, `${at}.scopeLogs[${i}]`),
  );
  return out;
}

function readScopeLogs(value: unknown, at: string): OtlpScopeLogs {
  const obj = objectAt(value === null ? {} : value, at)!;
  const out: OtlpScopeLogs = {};
  const scope = objectAt(field(obj, 'scope'), `${at}.scope`);
  if (scope) {
    out.scope = {
      attributes: readKeyValues(field(scope, 'attributes'), `${at}.scope.attributes`, 0),
    };
    const name = stringAt(field(scope, 'name'), `${at}.scope.name`);
    const version = stringAt(field(scope, 'version'), `${at}.scope.version`);
    if (name !== undefined) out.scope.name = name;
    if (version !== undefined) out.scope.version = version;
  }
  out.logRecords = arrayAt(field(obj, 'logRecords'), `${at}.logRecords`).map((lr, i) =>
    readLogRecord(lr, `${at}.logRecords[${i}]`),
  );
  return out;
}

function readLogRecord(value: unknown, at: string): OtlpLogRecord {
  const obj = objectAt(value === null ? {} : value, at)!;
  const out: OtlpLogRecord = {};
  const time = int64At(field(obj, 'timeUnixNano'), `${at}.timeUnixNano`, true);
  const observed = int64At(field(obj, 'observedTimeUnixNano'), `${at}.observedTimeUnixNano`, true);
  const severityNumber = severityNumberAt(field(obj, 'severityNumber'), `${at}.severityNumber`);
  const severityText = stringAt(field(obj, 'severityText'), `${at}.severityText`);
  const bodyValue = field(obj, 'body');
  const flags = int32At(field(obj, 'flags'), `${at}.flags`, 0, 0xffffffff);
  const traceId = hexBytesAt(field(obj, 'traceId'), `${at}.traceId`);
  const spanId = hexBytesAt(field(obj, 'spanId'), `${at}.spanId`);
  const eventName = stringAt(field(obj, 'eventName'), `${at}.eventName`);
  if (time !== undefined) out.timeUnixNano = time;
  if (observed !== undefined) out.observedTimeUnixNano = observed;
  if (severityNumber !== undefined) out.severityNumber = severityNumber;
  if (severityText !== undefined) out.severityText = severityText;
  if (bodyValue !== undefined) out.body = readAnyValue(bodyValue, `${at}.body`, 0);
  out.attributes = readKeyValues(field(obj, 'attributes'), `${at}.attributes`, 0);
  if (flags !== undefined) out.flags = flags;
  if (traceId !== undefined) out.traceId = traceId;
  if (spanId !== undefined) out.spanId = spanId;
  if (eventName !== undefined) out.eventName = eventName;
  return out;
}

function readKeyValues(value: unknown, at: string, depth: number): OtlpKeyValue[] {
  return arrayAt(value, at).map((kv, i) => {
    const where = `${at}[${i}]`;
    const obj = objectAt(kv === null ? {} : kv, where)!;
    const out: OtlpKeyValue = {};
    const key = stringAt(field(obj, 'key'), `${where}.key`);
    const v = field(obj, 'value');
    if (key !== undefined) out.key = key;
    if (v !== undefined) out.value = readAnyValue(v, `${where}.value`, depth);
    return out;
  });
}

function readAnyValue(value: unknown, at: string, depth: number): OtlpAnyValue {
  if (depth > MAX_VALUE_DEPTH) throw tooDeep();
  const obj = objectAt(value, at)!;
  // One member of the oneof; a sender setting several is malformed in protobuf terms,
  // and the first one found here wins.
  const s = field(obj, 'stringValue');
  if (s !== undefined) return { stringValue: stringAt(s, `${at}.stringValue`)! };
  const b = field(obj, 'boolValue');
  if (b !== undefined)
    return typeof b === 'boolean' ? { boolValue: b } : invalid(`${at}.boolValue`, 'a boolean');
  const i = field(obj, 'intValue');
  if (i !== undefined) return { intValue: int64At(i, `${at}.intValue`, false)! };
  const d = field(obj, 'doubleValue');
  if (d !== undefined) return { doubleValue: doubleAt(d, `${at}.doubleValue`)! };
  const bytes = field(obj, 'bytesValue');
  if (bytes !== undefined) return { bytesValue: base64BytesAt(bytes, `${at}.bytesValue`)! };
  const arr = field(obj, 'arrayValue');
  if (arr !== undefined) {
    const a = objectAt(arr, `${at}.arrayValue`)!;
    const values = arrayAt(field(a, 'values'), `${at}.arrayValue.values`).map((v, k) =>
      readAnyValue(v === null ? {} : v, `${at}.arrayValue.values[${k}]`, depth + 1),
    );
    return { arrayValue: { values } };
  }
  const kvlist = field(obj, 'kvlistValue');
  if (kvlist !== undefined) {
    const kv = objectAt(kvlist, `${at}.kvlistValue`)!;
    return {
      kvlistValue: { values: readKeyValues(field(kv, 'values'), `${at}.kvlistValue.values`, depth + 1) },
    };
  }
  return {};
}

const tooDeep = () =>
  new OtlpRequestError(`Invalid OTLP: a value is nested deeper than ${MAX_VALUE_DEPTH} levels.`);

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
