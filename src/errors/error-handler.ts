import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import {
  AppError,
  type FieldErrors,
  isInvalidValueError,
  isNoSpaceError,
  isOutOfMemoryError,
  outOfMemory,
  storageFull,
} from './errors.js';

export interface ErrorBody {
  detail: string;
  code: string;
  errors?: FieldErrors;
  request_id?: string;
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Marks the pattern of query-string booleans so the handler can say what it expects. */
export const BOOLEAN_PATTERN = '^(?:[tT][rR][uU][eE]|[fF][aA][lL][sS][eE]|[yY][eE][sS]|[nN][oO]|1|0)$';

function fieldErrorsFromAjv(validation: AjvError[], context: string | undefined): FieldErrors {
  const errors: FieldErrors = {};
  const push = (field: string, message: string) => {
    const key = field || context || 'non_field_errors';
    const list = errors[key] ?? [];
    if (!list.includes(message)) list.push(message);
    errors[key] = list;
  };
  for (const e of validation) {
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
      case 'pattern':
        push(
          field,
          e.params.pattern === BOOLEAN_PATTERN
            ? 'Must be a boolean: true, false, 1, 0, yes or no.'
            : (e.message ?? 'Invalid value.'),
        );
        break;
      case 'enum':
        push(
          field,
          Array.isArray(e.params.allowedValues)
            ? `Must be one of ${e.params.allowedValues.join(', ')}.`
            : (e.message ?? 'Invalid value.'),
        );
        break;
      default:
        push(field, e.message ?? 'Invalid value.');
    }
  }
  return errors;
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
    return [error.status, body, error.headers ?? {}];
  }
  const fe = error as FastifyError & { validation?: AjvError[]; validationContext?: string };
  if (fe.validation) {
    const errors = fieldErrorsFromAjv(fe.validation, fe.validationContext);
    const summary = Object.entries(errors)
      .map(([k, v]) => `${k}: ${v.join(' ')}`)
      .join('; ');
    return [400, { detail: `Invalid input: ${summary}`, code: 'invalid', errors }, {}];
  }
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
