/**
 * The one logger every service receives: pino's calling convention (details first, then
 * the message), so the server's logger, the one Fastify writes with, is passed as is.
 * Failures services catch and keep from clients (an engine's own text never reaches an
 * answer) go here at `error`, for an operator to see.
 */
export interface Log {
  error(detail: object, message: string): void;
  warn(detail: object, message: string): void;
  info(detail: object, message: string): void;
}

/** Says nothing (tests, and commands that serve nothing). */
export const silentLog: Log = {
  error: () => undefined,
  warn: () => undefined,
  info: () => undefined,
};
