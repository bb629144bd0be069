/**
 * The error model (API.md §1): every error the service answers with is an AppError made
 * by one of these factories, carrying a stable `code`. The one HTTP error handler
 * renders them; anything else is hidden behind a 500 with a request id.
 */
export type FieldErrors = Record<string, string[]>;

export class AppError extends Error {
  override name = 'AppError';
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
