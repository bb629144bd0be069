import { AppError, isNoSpaceError } from './errors.js';

/** A start-up failure the CLI reports as its one-line message, without a stack. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** Where a postgres:// URL points, without its user or password: `host:port/database`. */
export function describePostgres(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname || 'localhost'}:${u.port || '5432'}${u.pathname && u.pathname !== '/' ? u.pathname : ''}`;
  } catch {
    return 'the configured server';
  }
}

/** Node's codes for a server that cannot be reached over the network (any store). */
export const NETWORK_UNREACHABLE: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** Network failures of reaching PostgreSQL: worth retrying while it starts or the network settles. */
const PG_UNREACHABLE = new Set([
  ...NETWORK_UNREACHABLE,
  '57P01', // admin_shutdown: the server stopped under a connection
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: the server is starting up or shutting down
  '53300', // too_many_connections
]);

const PG_REFUSED: Record<string, string> = {
  '28P01': 'the password was refused',
  '28000': 'the user is not allowed to connect',
  '3D000': 'the database does not exist',
  '42501': 'the user lacks a privilege the schema needs',
};

const codeOf = (err: unknown): string => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
};

/** Whether a failure to open PostgreSQL may pass if tried again (the server is down or starting). */
export function isPostgresUnreachable(err: unknown): boolean {
  if (PG_UNREACHABLE.has(codeOf(err))) return true;
  // pg's own connect timeout, and an AggregateError of several addresses (localhost: ::1 and 127.0.0.1).
  const e = err as { message?: unknown; errors?: unknown } | null;
  if (typeof e?.message === 'string' && /timeout expired|Connection terminated/i.test(e.message)) return true;
  return Array.isArray(e?.errors) && e.errors.some((inner) => PG_UNREACHABLE.has(codeOf(inner)));
}

/** Why a server could not be reached, in words, by Node's (or PostgreSQL's) code. */
export const UNREACHABLE_REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  '57P03': 'the server is starting up or shutting down',
  '53300': 'too many connections',
};

/** Why PostgreSQL could not be used, in words (`connection refused`). */
export function pgReason(err: unknown): string {
  const code = codeOf(err) || codeOf((err as { errors?: unknown[] } | null)?.errors?.[0]);
  return UNREACHABLE_REASONS[code] ?? PG_REFUSED[code] ?? (code ? code : 'no answer');
}

/** Whether DuckDB refused to open its file because another process holds its lock (its PID in the text). */
export function isDataDirLocked(err: unknown): boolean {
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && /Could not set lock on file/i.test(message);
}

export interface StartupContext {
  dataDir: string;
  port: number;
  host: string;
  databaseUrl: string;
}

/**
 * The one line a start-up failure is reported with, or null for a failure nobody foresaw
 * (then the stack is worth having). Never includes a password.
 */
export function startupMessage(err: unknown, ctx: StartupContext): string | null {
  if (err instanceof StartupError) return err.message;
  const code = codeOf(err);
  const message = (err as { message?: unknown } | null)?.message;
  const text = typeof message === 'string' ? message : '';
  const syscall = (err as { syscall?: unknown } | null)?.syscall;
  if (err instanceof AppError && err.code === 'storage_full') return err.message;
  if (isNoSpaceError(err))
    return `Cannot start: no space left on the disk of the data directory ${ctx.dataDir} (the stores cannot open their files). Free some space and start again.`;
  if (syscall === 'listen' && code === 'EADDRINUSE') {
    // The port the error names: the HTTP port, or a listener's (syslog, GELF) on its own.
    const port = (err as { port?: unknown }).port;
    const address = (err as { address?: unknown }).address;
    if (typeof port === 'number' && port !== ctx.port)
      return `Cannot start: port ${port} on ${typeof address === 'string' ? address : ctx.host} is already in use (another Logscope or program listens there); stop it or choose another port with LOGSCOPE_SYSLOG_PORT / LOGSCOPE_GELF_PORT.`;
    return `Cannot start: port ${ctx.port} on ${ctx.host} is already in use (another Logscope or program listens there); stop it or choose another port with --port / LOGSCOPE_PORT.`;
  }
  if (syscall === 'listen' && code === 'EACCES')
    return `Cannot start: no permission to listen on port ${ctx.port} (ports below 1024 need privileges); choose another port with --port / LOGSCOPE_PORT, or put a reverse proxy in front.`;
  if (syscall === 'listen' && code === 'EADDRNOTAVAIL')
    return `Cannot start: ${ctx.host} is not an address of this machine; set --host / LOGSCOPE_HOST to one (0.0.0.0 for all).`;
  if (ctx.databaseUrl && PG_REFUSED[code])
    return `Cannot start: PostgreSQL at ${describePostgres(ctx.databaseUrl)} refused: ${pgReason(err)}; check databaseUrl (LOGSCOPE_DATABASE_URL).`;
  if (isDataDirLocked(err)) {
    const pid = /PID (\d+)/.exec(text)?.[1];
    return `Cannot start: the data directory ${ctx.dataDir} is in use by another Logscope process${pid ? ` (PID ${pid})` : ''}; stop it or choose another data dir with --data-dir / LOGSCOPE_DATA_DIR.`;
  }
  if (
    (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') &&
    typeof (err as { path?: unknown }).path === 'string'
  )
    return `Cannot start: no permission to write ${(err as { path: string }).path}; run as the user owning the data directory ${ctx.dataDir}, or choose another with --data-dir.`;
  return null;
}
