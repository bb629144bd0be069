import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import {
  AppError,
  type FieldErrors,
  isInvalidValueError,
  isNoSpaceError,
  isOutOfMemoryError,
  isUniqueViolation,
  outOfMemory,
  storageFull,
  storeUnavailable,
} from './errors.js';
import { isPostgresUnreachable } from './startup.js';

export interface ErrorBody {
  detail: string;
  code: string;
  errors?: FieldErrors;
  request_id?: string;
  /** The object the error is about, where it names one (the backup running already). */
  id?: string;
}

export interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Marks the pattern of query-string booleans so the handler can say what it expects. */
export const BOOLEAN_PATTERN = '^(?:[tT][rR][uU][eE]|[fF][aA][lL][sS][eE]|[yY][eE][sS]|[nN][oO]|1|0)$';

interface AjvErrorWithSchema extends AjvError {
  schemaPath?: string;
}

const TYPE_NAMES: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/** "a, b or c" */
const orList = (items: string[]): string =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;

const shown = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** One validation failure in words a person reads: what the value must be. */
function describeAjvError(e: AjvError): string {
  const p = e.params;
  switch (e.keyword) {
    case 'type':
      return `Must be ${orList(
        String(p.type)
          .split(',')
          .map((t) => TYPE_NAMES[t] ?? t),
      )}.`;
    case 'enum':
      return Array.isArray(p.allowedValues)
        ? `Must be one of ${p.allowedValues.map(shown).join(', ')}.`
        : 'Invalid value.';
    case 'const':
      return `Must be ${shown(p.allowedValue)}.`;
    case 'minimum':
    case 'exclusiveMinimum':
    case 'maximum':
    case 'exclusiveMaximum':
      return `Must be ${String(p.comparison)} ${String(p.limit)}.`;
    case 'minLength':
      return p.limit === 1 ? 'Must not be empty.' : `Must be at least ${String(p.limit)} characters long.`;
    case 'maxLength':
      return `Must be at most ${String(p.limit)} characters long.`;
    case 'minItems':
      return `Must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}.`;
    case 'maxItems':
      return `Must have at most ${String(p.limit)} items.`;
    case 'uniqueItems':
      return 'Must not repeat an item.';
    case 'format':
      return p.format === 'date-time'
        ? 'Must be a date-time (ISO 8601, e.g. 2026-01-31T12:00:00Z).'
        : `Must be a valid ${String(p.format)}.`;
    case 'pattern':
      return p.pattern === BOOLEAN_PATTERN
        ? 'Must be a boolean: true, false, 1, 0, yes or no.'
        : `Must match the pattern ${String(p.pattern)}.`;
    default:
      return e.message ? `${e.message.charAt(0).toUpperCase()}${e.message.slice(1)}.` : 'Invalid value.';
  }
}

/**
 * A union of simple alternatives (`"table" | "bar" | ...`, `integer | null`) failed: one
 * message naming all of them ("Must be one of table, bar, pie." / "Must be an integer,
 * a string or null."), or null when an alternative is a structure whose own errors say more.
 */
function describeUnion(branches: AjvError[]): string | null {
  const values: string[] = [];
  const types: string[] = [];
  for (const b of branches) {
    if (b.keyword === 'const') values.push(shown(b.params.allowedValue));
    else if (b.keyword === 'enum' && Array.isArray(b.params.allowedValues))
      values.push(...b.params.allowedValues.map(shown));
    else if (b.keyword === 'type')
      types.push(
        ...String(b.params.type)
          .split(',')
          .map((t) => TYPE_NAMES[t] ?? t),
      );
    else return null;
  }
  if (values.length && types.length) return `Must be one of ${values.join(', ')}, or ${orList(types)}.`;
  if (values.length) return `Must be one of ${values.join(', ')}.`;
  return types.length ? `Must be ${orList([...new Set(types)])}.` : null;
}

function fieldErrorsFromAjv(validation: AjvErrorWithSchema[], context: string | undefined): FieldErrors {
  // A Map: field names come from the request (`__proto__` is one a client can send).
  const byField = new Map<string, string[]>();
  const push = (field: string, message: string) => {
    const key = field || context || 'non_field_errors';
    const list = byField.get(key) ?? [];
    if (!list.includes(message)) list.push(message);
    byField.set(key, list);
  };
  // The alternatives of a failed union report one error each, then the union its own:
  // fold those of a union of simple values into one message listing the allowed values.
  const folded = new Set<AjvError>();
  const unionMessage = new Map<AjvError, string>();
  for (const e of validation) {
    if ((e.keyword !== 'anyOf' && e.keyword !== 'oneOf') || !e.schemaPath) continue;
    const prefix = `${e.schemaPath}/`;
    const branches = validation.filter(
      (b) => b !== e && b.schemaPath?.startsWith(prefix) && b.instancePath === e.instancePath,
    );
    const deeper = validation.some(
      (b) => b.schemaPath?.startsWith(prefix) && b.instancePath.startsWith(`${e.instancePath}/`),
    );
    const message = deeper ? null : describeUnion(branches);
    if (message) {
      for (const b of branches) folded.add(b);
      unionMessage.set(e, message);
      continue;
    }
    // Objects told apart by a literal (`type: 'threshold'`): the one form whose literal
    // the input has speaks alone; the others' "Unknown field." would be noise.
    const chosen = discriminatedBranch(validation, e, prefix);
    if (chosen === null) {
      unionMessage.set(e, 'Does not match any of the allowed forms.');
      continue;
    }
    folded.add(e);
    for (const b of validation)
      if (b.schemaPath?.startsWith(prefix) && !b.schemaPath.startsWith(`${prefix}${chosen}/`)) folded.add(b);
  }
  for (const e of validation) {
    if (folded.has(e)) continue;
    const field = e.instancePath.replace(/^\//, '').replaceAll('/', '.');
    switch (e.keyword) {
      case 'additionalProperties':
        push(
          field ? `${field}.${String(e.params.additionalProperty)}` : String(e.params.additionalProperty),
          'Unknown field.',
        );
        break;
      case 'required':
        push(
          field ? `${field}.${String(e.params.missingProperty)}` : String(e.params.missingProperty),
          'This field is required.',
        );
        break;
      case 'anyOf':
      case 'oneOf':
        push(field, unionMessage.get(e) ?? 'Does not match any of the allowed forms.');
        break;
      default:
        push(field, describeAjvError(e));
    }
  }
  // fromEntries defines each key as the object's own, `__proto__` included.
  return Object.fromEntries(byField);
}

/**
 * The branch of a failed union of objects whose literal properties all match the input
 * (the others failed a `const` on a property of it), when there is exactly one; else null.
 */
function discriminatedBranch(
  validation: readonly AjvErrorWithSchema[],
  union: AjvError,
  prefix: string,
): string | null {
  const branches = new Set<string>();
  const refused = new Set<string>();
  for (const b of validation) {
    if (!b.schemaPath?.startsWith(prefix)) continue;
    const branch = b.schemaPath.slice(prefix.length).split('/')[0] ?? '';
    branches.add(branch);
    const property = b.instancePath.slice(union.instancePath.length);
    if (b.keyword === 'const' && /^\/[^/]+$/.test(property)) refused.add(branch);
  }
  const left = [...branches].filter((b) => !refused.has(b));
  return refused.size > 0 && left.length === 1 ? (left[0] ?? null) : null;
}

/**
 * Validation errors looked at for a 400's message (ajv reports them all: `allErrors`);
 * the validator hands on no more (app.ts).
 */
export const MAX_VALIDATION_ERRORS = 200;

/** The 400 body of a failed schema validation: a summary in `detail`, the messages by field. */
export function describeValidation(
  validation: readonly AjvErrorWithSchema[],
  context?: string,
): ErrorBody & { errors: FieldErrors } {
  // A body of thousands of bad items gives thousands of errors (each alternative of a
  // union one more), and folding unions compares them pairwise: the first ones say enough.
  const errors = fieldErrorsFromAjv(validation.slice(0, MAX_VALIDATION_ERRORS), context);
  const summary = Object.entries(errors)
    .map(([k, v]) => `${k}: ${v.join(' ')}`)
    .join('; ');
  return { detail: `Invalid input: ${summary}`, code: 'invalid', errors };
}

/**
 * Status, body and headers of an error: what errorHandler sends, for scopes that
 * render the same error in another protocol's shape (the Elasticsearch intake).
 */
export function describeError(
  error: FastifyError | AppError | Error,
  request: FastifyRequest,
): [number, ErrorBody, Record<string, string>] {
  if (error instanceof AppError) {
    const body: ErrorBody = { detail: error.message, code: error.code };
    if (error.errors) body.errors = error.errors;
    if (typeof error.id === 'string') body.id = error.id;
    return [error.status, body, error.headers ?? {}];
  }
  const fe = error as FastifyError & { validation?: AjvErrorWithSchema[]; validationContext?: string };
  if (fe.validation) return [400, describeValidation(fe.validation, fe.validationContext), {}];
  const status = fe.statusCode;
  if (status && status >= 400 && status < 500) {
    const code = CODES_BY_STATUS[status] ?? 'bad_request';
    return [status, { detail: friendlyMessage(fe), code }, {}];
  }
  if (isInvalidValueError(error)) {
    return [
      400,
      {
        detail: 'A value in the request cannot be stored: a number out of range or a NUL character in text.',
        code: 'invalid_value',
      },
      {},
    ];
  }
  if (isUniqueViolation(error)) {
    // The loser of two identical creates (same title, same name) that both passed the
    // service's check: the same 409 the check gives, and nothing was written.
    request.log.info({ err: error }, 'unique constraint: answered 409');
    return [
      409,
      {
        detail:
          'One with the same name already exists (made by a request at the same moment); nothing was changed.',
        code: 'conflict',
      },
      {},
    ];
  }
  if (isPostgresUnreachable(error)) {
    // PostgreSQL down or restarting: the request may succeed again shortly (the pool
    // reconnects by itself); its own text goes to the log.
    request.log.warn({ err: error }, 'metadata store unreachable');
    const e = storeUnavailable('The metadata store (PostgreSQL) cannot be reached right now; retry shortly.');
    return [e.status, { detail: e.message, code: e.code }, e.headers ?? {}];
  }
  request.log.error({ err: error }, 'unhandled error');
  // A store that cannot write for lack of space, or an engine out of memory: say so
  // (507 / 503), never with the engine's text.
  const mapped = isNoSpaceError(error) ? storageFull() : isOutOfMemoryError(error) ? outOfMemory() : null;
  if (mapped) return [mapped.status, { detail: mapped.message, code: mapped.code }, mapped.headers ?? {}];
  return [
    500,
    { detail: 'Internal server error.', code: 'server_error', request_id: String(request.id) },
    {},
  ];
}

const CODES_BY_STATUS: Record<number, string> = {
  400: 'bad_request',
  401: 'not_authenticated',
  403: 'permission_denied',
  404: 'not_found',
  405: 'method_not_allowed',
  406: 'not_acceptable',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'throttled',
};

function friendlyMessage(e: FastifyError): string {
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return `Unsupported media type${e.message.includes('"') ? ` ${e.message.slice(e.message.indexOf('"'))}` : ''}: send application/json, application/x-www-form-urlencoded or multipart/form-data.`;
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'Request body is too large.';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'Request body is empty but Content-Type is application/json.';
    default:
      // zlib's own codes: a compressed body that does not decompress.
      if (/^Z_[A-Z_]+$/.test(String(e.code)))
        return `Request body is not valid gzip/deflate data (${e.message}); nothing was stored.`;
      if (e instanceof SyntaxError || e.code === 'FST_ERR_CTP_INVALID_JSON_BODY')
        return `Malformed JSON: ${e.message}`;
      return e.message;
  }
}

/** The one error handler: renders the API's error shape, hides unknown errors. */
export function errorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  const [status, body, headers] = describeError(error, request);
  return reply.status(status).headers(headers).type('application/json; charset=utf-8').send(body);
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply) {
  return reply
    .status(404)
    .type('application/json; charset=utf-8')
    .send({ detail: `No route ${request.method} ${request.url.split('?')[0]}.`, code: 'not_found' });
}
