import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { pino } from 'pino';

/**
 * A token's secret anywhere in a URL: `ls<key id>_<secret>` (domain/tokens/secrets.ts),
 * in a path (`DELETE /api/authtokens/<key>`, the UI's sign-out; the journal uploader's
 * `/api/ingest/journald/<key>/upload`) as in a query. Its key id stays, to tell tokens apart.
 */
const TOKEN_SECRET = /\b(ls[0-9A-Za-z]{10})_[0-9A-Za-z]{32}\b/g;

/**
 * A URL as logged: no token secret (see TOKEN_SECRET), and the value of a `token` query
 * parameter (the websocket's key, however its name is spelled or percent-encoded) is
 * never written out.
 */
export function redactUrl(raw: string): string {
  const url = raw.replace(TOKEN_SECRET, '$1_<redacted>');
  const q = url.indexOf('?');
  if (q < 0) return url;
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      const key = eq < 0 ? part : part.slice(0, eq);
      let name = key;
      try {
        name = decodeURIComponent(key.replace(/\+/g, ' '));
      } catch {
        // Not valid percent-encoding: compared as it is.
      }
      return name.trim().toLowerCase() === 'token' ? `${key}=<redacted>` : part;
    });
  return `${url.slice(0, q + 1)}${parts.join('&')}`;
}

/** Scrapes that arrive every few seconds from monitoring: logged at debug, not info. */
const SCRAPES = new Set(['/api/health', '/metrics']);

/**
 * The one log line of a request: `GET /api/events 200 12.3 ms`, with method, URL (token
 * redacted), status, time and client address as fields. Health checks and metric scrapes
 * at debug; server errors at error, so they stand out. A websocket upgrade is logged as
 * 101 when it is accepted (no reply follows it).
 */
export function logRequest(request: FastifyRequest, status: number, elapsedMs?: number): void {
  const url = redactUrl(request.url);
  const path = request.url.split('?', 1)[0] ?? '';
  const ms = elapsedMs === undefined ? undefined : Math.round(elapsedMs * 10) / 10;
  const level = status >= 500 ? 'error' : SCRAPES.has(path) ? 'debug' : 'info';
  request.log[level](
    { method: request.method, url, status, ms, remoteAddress: request.ip },
    `${request.method} ${url} ${status}${ms === undefined ? '' : ` ${ms} ms`}`,
  );
}

/** Fastify's request log fields, with the URL redacted. */
export const serializeRequest = (request: FastifyRequest) => ({
  method: request.method,
  url: redactUrl(request.url),
  host: request.host,
  remoteAddress: request.ip,
  remotePort: request.socket?.remotePort,
});

/**
 * The serving process's one logger (JSON lines on stdout at `level`), made before the
 * services so they and the HTTP layer write with the same one.
 */
export function createServerLogger(level: string): FastifyBaseLogger {
  return pino({ level, serializers: { req: serializeRequest } });
}
