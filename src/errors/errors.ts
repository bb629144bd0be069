/**
 * The error model: every error the service answers with is an AppError made
 * by one of these factories, carrying a stable `code`. The one HTTP error handler
 * renders them; anything else is hidden behind a 500 with a request id.
 */
export type FieldErrors = Record<string, string[]>;

export class AppError extends Error {
  override name = 'AppError';
  /** The object the error is about, where it names one (a running job's id in a 409). */
  id?: string;
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors?: FieldErrors,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const createError = (status: number, code: string, message: string, errors?: FieldErrors) =>
  new AppError(status, code, message, errors);

export const validationError = (errors: FieldErrors, message = 'Invalid input.') =>
  new AppError(400, 'invalid', message, errors);

export const badRequest = (message: string, code = 'bad_request') => new AppError(400, code, message);

export const fieldError = (field: string, message: string) =>
  new AppError(400, 'invalid', `${field}: ${message}`, { [field]: [message] });

export const notAuthenticated = (message = 'Authentication credentials were not provided.') =>
  new AppError(401, 'not_authenticated', message, undefined, { 'WWW-Authenticate': 'Token' });

export const authenticationFailed = (message = 'Invalid token.') =>
  new AppError(401, 'authentication_failed', message, undefined, { 'WWW-Authenticate': 'Token' });

export const permissionDenied = (message = 'You do not have permission to perform this action.') =>
  new AppError(403, 'permission_denied', message);

export const notFound = (message = 'Not found.') => new AppError(404, 'not_found', message);

export const conflict = (message: string) => new AppError(409, 'conflict', message);

/** A 409 naming the object in the way (`id` in the error: a job running already). */
export const conflictWith = (code: string, message: string, id: string) =>
  Object.assign(new AppError(409, code, message), { id });

export const tooManyRequests = (retryAfterSeconds: number, message = 'Request was throttled.') =>
  new AppError(429, 'throttled', message, undefined, { 'Retry-After': String(retryAfterSeconds) });

export const unavailable = (message: string, retryAfterSeconds?: number) =>
  new AppError(
    503,
    'unavailable',
    message,
    undefined,
    retryAfterSeconds === undefined ? undefined : { 'Retry-After': String(retryAfterSeconds) },
  );

/** A store (events, metadata) cannot be reached right now: 503, code store_unavailable (docs/operations/clickhouse.md). */
export const storeUnavailable = (message: string) =>
  new AppError(503, 'store_unavailable', message, undefined, { 'Retry-After': '5' });

/** A write the disk has no room for: 507, code storage_full. */
export const storageFull = (
  message = 'The server has no storage space left for this write; retry once space is freed.',
) => new AppError(507, 'storage_full', message);

/** The engine ran out of memory for a query or report (its own text goes to the log). */
export const outOfMemory = (
  message = 'The server has not enough memory for this query right now; narrow it (time range, filter, fewer rows) or retry later.',
) => new AppError(503, 'out_of_memory', message, undefined, { 'Retry-After': '5' });

const NO_SPACE =
  /No space left on device|ENOSPC|disk I\/O error|database or disk is full|SQLITE_FULL|Disk full/i;
const OUT_OF_MEMORY = /Out of Memory|could not allocate|failed to allocate|ERR_OUT_OF_MEMORY|memory_limit/i;

/**
 * Whether an error (DuckDB's, SQLite's, PostgreSQL's or Node's) means the disk is full:
 * ENOSPC, "No space left on device", SQLite's SQLITE_FULL / "disk I/O error",
 * PostgreSQL's 53100 (disk_full).
 */
export function isNoSpaceError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : '';
  if (code === 'ENOSPC' || code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR') || code === '53100')
    return true;
  return typeof e.message === 'string' && NO_SPACE.test(e.message);
}

/**
 * Whether a PostgreSQL error is a data exception (SQLSTATE class 22): a value the client
 * sent that the column cannot hold (an integer out of range, a NUL character in text).
 * Such a value is the client's error, whatever route let it through.
 */
export function isInvalidValueError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; severity?: unknown };
  return typeof e.code === 'string' && /^22[0-9A-Z]{3}$/.test(e.code) && typeof e.severity === 'string';
}

/**
 * Whether a metadata store refused a write for a unique constraint (PostgreSQL's 23505,
 * SQLite's SQLITE_CONSTRAINT_UNIQUE). Services check names before they write; this is what
 * two requests making the same thing at the same moment meet when both pass that check.
 */
export function isUniqueViolation(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as { code?: unknown; severity?: unknown };
  if (e.code === 'SQLITE_CONSTRAINT_UNIQUE') return true;
  return e.code === '23505' && typeof e.severity === 'string';
}

/** Whether an engine error means it ran out of memory (DuckDB's "Out of Memory Error"). */
export function isOutOfMemoryError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const m = (err as { message?: unknown }).message;
  return typeof m === 'string' && OUT_OF_MEMORY.test(m);
}
