/**
 * The OTLP logs model both decoders read a request into (camelCase names, int64 as decimal
 * text, bytes as bytes), and the error of a request that is not one (otlp.ts).
 */
import { AppError } from '../../errors/errors.js';

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
export type Int64 = string | number;

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

/** The error of a value nested deeper than MAX_VALUE_DEPTH. */
export const tooDeep = () =>
  new OtlpRequestError(`Invalid OTLP: a value is nested deeper than ${MAX_VALUE_DEPTH} levels.`);
