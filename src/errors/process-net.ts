import { AsyncLocalStorage } from 'node:async_hooks';

/** The request a piece of work was started for: set when a request arrives (app.ts). */
export interface RequestScope {
  requestId: string;
  /** Answers the request with a 500 if it has not been answered yet. */
  fail(): void;
}

/** Follows a request into every callback and promise its handling starts. */
export const requestScope = new AsyncLocalStorage<RequestScope>();

interface NetLog {
  error(obj: object, msg: string): void;
  fatal(obj: object, msg: string): void;
}

export interface ProcessNetOptions {
  /** More unexpected errors than this within `windowMs` and the process exits (code 1). */
  maxErrors?: number;
  windowMs?: number;
  exit?: (code: number) => void;
}

/**
 * The process-wide net: an error nothing caught (a throw in a timer or stream callback, a
 * rejected promise nobody awaited) is logged with the request it came from, that request
 * is answered with a 500 if it still waits, and the process keeps serving everyone else.
 * Fastify already answers for errors in handlers; this is for what escapes them. A burst
 * of such errors (more than `maxErrors` in `windowMs`: state this broken is not worth
 * serving from) exits, for the service manager to start a fresh process. Returns `off`.
 */
export function installProcessNet(log: NetLog, options: ProcessNetOptions = {}): () => void {
  const maxErrors = options.maxErrors ?? 20;
  const windowMs = options.windowMs ?? 60_000;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const recent: number[] = [];
  const onError = (kind: string) => (err: unknown) => {
    const scope = requestScope.getStore();
    log.error(
      { err, kind, ...(scope ? { reqId: scope.requestId } : {}) },
      `unexpected error (${kind}); serving on`,
    );
    scope?.fail();
    const now = Date.now();
    recent.push(now);
    while (recent.length > 0 && recent[0]! < now - windowMs) recent.shift();
    if (recent.length > maxErrors) {
      log.fatal(
        { errors: recent.length, windowMs },
        'too many unexpected errors: exiting for a clean restart',
      );
      exit(1);
    }
  };
  const onException = onError('uncaughtException');
  const onRejection = onError('unhandledRejection');
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}
