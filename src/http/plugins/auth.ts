import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Identity } from '../../core/identity.js';
import { authenticationFailed, notAuthenticated, permissionDenied } from '../../errors/errors.js';

/** Who may call a route: `user` (USER tokens), `ingest` (USER or INGEST), `public` (anyone). */
export type AuthMode = 'user' | 'ingest' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /**
     * The path parameter that may carry the token, for senders that cannot send headers
     * (systemd-journal-upload); the header wins when both are given.
     */
    pathToken?: string;
    /**
     * A request carrying this query parameter is a signed link (a report's file): the
     * route judges it instead of a token (docs/api/schedules.md).
     */
    signedLink?: string;
  }
  interface FastifyRequest {
    identity: Identity | null;
  }
}

/** The caller of an authenticated route; only call it where auth is not `public`. */
export function caller(request: FastifyRequest): Identity {
  if (!request.identity) throw notAuthenticated();
  return request.identity;
}

/**
 * Extracts the key from `Authorization: token <key>` / `Bearer <key>`, or `?token=` when
 * allowed. Ingest routes also take what log shippers send to Elasticsearch: `ApiKey`
 * (the key itself, or base64 of `id:key`) and `Basic` (the key as the password).
 */
export function presentedKey(
  request: FastifyRequest,
  allowQueryToken: boolean,
  shipperSchemes = false,
): string | undefined {
  const header = request.headers.authorization;
  if (header) {
    const m = /^\s*(token|bearer|apikey|basic)\s+(\S+)\s*$/i.exec(header);
    const scheme = m?.[1]?.toLowerCase();
    const value = m?.[2] ?? '';
    if (scheme === 'token' || scheme === 'bearer') return value;
    if (!shipperSchemes || !scheme) return '';
    const decoded = Buffer.from(value, 'base64').toString('utf8');
    if (scheme === 'basic') return decoded.slice(decoded.indexOf(':') + 1);
    // An API key is sent as is, or (Beats' `id:key` form) base64 of printable `id:key`.
    return /^[\x21-\x39\x3b-\x7e]+:[\x21-\x7e]+$/.test(decoded)
      ? decoded.slice(decoded.indexOf(':') + 1)
      : value;
  }
  if (allowQueryToken) {
    const q = (request.query as Record<string, unknown> | undefined)?.token;
    if (typeof q === 'string') return q;
  }
  return undefined;
}

/**
 * What a presented key may look like: printable ASCII without spaces, as a header carries
 * it, and no longer than a path token's schema allows. Real keys are far shorter
 * (domain/tokens/secrets.ts); anything else is no token of ours.
 */
const KEY_TEXT = /^[\x21-\x7e]{1,256}$/;

/**
 * Authenticates every request in `onRequest`, before the body is read, so an
 * unauthenticated caller learns nothing about body validation.
 */
/** Who a token is: the identity feature's tokens service answers (a refusal throws). */
export interface Authenticator {
  authenticate(secretKey: string): Promise<Identity>;
}

export const authPlugin = fp(async (app: FastifyInstance, opts: { tokens: Authenticator }) => {
  app.decorateRequest('identity', null);
  app.addHook('onRequest', async (request) => {
    const mode: AuthMode = request.routeOptions.config.auth ?? 'user';
    if (mode === 'public') return;
    const link = request.routeOptions.config.signedLink;
    if (link && (request.query as Record<string, unknown> | undefined)?.[link] !== undefined) return;
    const inPath = request.routeOptions.config.pathToken;
    const key =
      presentedKey(request, request.url.startsWith('/ws/'), mode === 'ingest') ??
      (inPath ? (request.params as Record<string, string | undefined>)[inPath] : undefined);
    if (key === undefined) throw notAuthenticated();
    if (!key) throw notAuthenticated('Malformed Authorization header: use "token <secret_key>".');
    // A key from a path or a query string is whatever the URL held (`%00`, `..`, 300
    // characters): refused here unless it could be a key, before any store reads it (a NUL
    // is an error to PostgreSQL, issue 54).
    if (!KEY_TEXT.test(key)) throw authenticationFailed();
    const who = await opts.tokens.authenticate(key);
    if (mode === 'user' && who.tokenType !== 'USER') {
      throw permissionDenied('An INGEST token may only send events.');
    }
    request.identity = who;
  });
});
