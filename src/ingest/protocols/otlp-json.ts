/**
 * OTLP/JSON: lowerCamelCase names (the proto's snake_case accepted too), unknown names
 * ignored, `null` as absent, int64 as a string or a number, enums as integers or names,
 * ids as hex and bytes as base64. A value of the wrong type makes the whole request
 * malformed (OtlpRequestError, a 400). See otlp.ts for what the records become.
 */
import {
  MAX_VALUE_DEPTH,
  type OtlpAnyValue,
  type OtlpKeyValue,
  type OtlpLogRecord,
  type OtlpLogsRequest,
  OtlpRequestError,
  type OtlpResourceLogs,
  type OtlpScopeLogs,
  tooDeep,
} from './otlp-model.js';

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

export function readJsonRequest(json: unknown): OtlpLogsRequest {
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
