import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { parse as parseCookies, type SerializeOptions, serialize as serializeCookie } from 'cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, authenticationFailed, notFound } from '../../errors/errors.js';
import { errorResponses } from '../../http/schemas/common.js';
import type { TokensService } from '../identity/tokens-service.js';
import { ProviderUnavailable } from './relying-party.js';
import { localPath, SIGN_IN_MS, type SignOnService } from './sign-on-service.js';

/** The browser's key to the sign-in it started (path-bound to the callback, 10 minutes). */
const SIGN_IN_COOKIE = 'logscope_sign_in';
/** The session token, handed to the web UI by one POST (never in a URL), for one minute. */
const SESSION_COOKIE = 'logscope_session';
const HANDOFF_SECONDS = 60;

export interface SignOnRoutesOptions {
  signOn: SignOnService | null;
  tokens: TokensService;
  /** The label of the provider's button; null without single sign-on. */
  label: string | null;
  passwordLogin: boolean;
  /** The public URL is https: cookies are Secure. */
  secure: () => boolean;
  /** `publicUrl` as configured, without a trailing slash; null when it is not set. */
  publicUrl: string | null;
}

const tags = ['auth'];

/** `GET /api/auth/methods`, and the sign-in with the OpenID provider (docs/sign-on.md). */
export async function signOnRoutes(fastify: FastifyInstance, opts: SignOnRoutesOptions) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { signOn, tokens } = opts;

  app.get(
    '/api/auth/methods',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary:
          'How one may sign in: with a password, with the OpenID provider; where clients reach the server',
        security: [],
        response: {
          200: Type.Object({
            password: Type.Boolean(),
            oidc: Type.Union([Type.Object({ label: Type.String() }), Type.Null()]),
            public_url: Type.Union([Type.String(), Type.Null()], {
              description:
                'The configured `publicUrl` without a trailing slash (the web UI builds addresses for other clients on it, such as the MCP endpoint); null when it is not set',
            }),
          }),
        },
      },
    },
    async () => ({
      password: opts.passwordLogin,
      oidc: opts.label ? { label: opts.label } : null,
      public_url: opts.publicUrl,
    }),
  );

  /** Sets (or, with maxAge 0, clears) an HttpOnly, SameSite=Lax cookie for one path. */
  const setCookie = (reply: FastifyReply, name: string, value: string, path: string, maxAge: number) => {
    const options: SerializeOptions = {
      path,
      maxAge,
      httpOnly: true,
      sameSite: 'lax',
      secure: opts.secure(),
    };
    const line = serializeCookie(name, value, options);
    const had = reply.getHeader('set-cookie');
    reply.header('set-cookie', [...(Array.isArray(had) ? had : had ? [String(had)] : []), line]);
  };
  const cookieOf = (request: FastifyRequest, name: string) =>
    parseCookies(request.headers.cookie ?? '')[name] || undefined;

  app.get(
    '/api/auth/oidc/login',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'Sign in with the OpenID provider: redirects to it (`next`: the local path to return to)',
        security: [],
        querystring: Type.Object({ next: Type.Optional(Type.String({ maxLength: 2000 })) }),
        response: { 302: Type.Null(), ...errorResponses(400, 404) },
      },
    },
    async (request, reply) => {
      if (!signOn) throw notFound('Single sign-on is not configured.');
      const next = localPath(request.query.next);
      try {
        const { url, browserKey } = await signOn.begin(next);
        setCookie(reply, SIGN_IN_COOKIE, browserKey, '/api/auth/oidc', SIGN_IN_MS / 1000);
        return reply.redirect(url, 302);
      } catch (err) {
        if (!(err instanceof ProviderUnavailable)) throw err;
        // The sign-in page says so; password sign-in is unaffected.
        return reply.redirect(`/login?sso_error=unavailable&next=${encodeURIComponent(next)}`, 302);
      }
    },
  );

  app.get(
    '/api/auth/oidc/callback',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: "The provider's answer: signs the browser in and returns it to the page it asked for",
        security: [],
        // The provider's answer (RFC 6749 §4.1.2, RFC 9207); any other parameter is its own.
        querystring: Type.Object(
          Object.fromEntries(
            ['code', 'state', 'iss', 'error', 'error_description', 'session_state'].map((k) => [
              k,
              Type.Optional(Type.String({ maxLength: 8192 })),
            ]),
          ),
        ),
      },
    },
    async (request, reply) => {
      if (!signOn) throw notFound('Single sign-on is not configured.');
      // The sign-in is taken whatever happens next: a replay finds nothing.
      setCookie(reply, SIGN_IN_COOKIE, '', '/api/auth/oidc', 0);
      try {
        const url = new URL(request.url, 'http://callback.invalid');
        const done = await signOn.complete(cookieOf(request, SIGN_IN_COOKIE), url);
        request.signedIn = {
          user_id: done.user.id,
          username: done.user.username,
          token_key_id: done.token.key_id,
        };
        setCookie(reply, SESSION_COOKIE, done.token.secret_key, '/api/auth/oidc/session', HANDOFF_SECONDS);
        return reply.redirect(`/login?sso=done&next=${encodeURIComponent(done.next)}`, 302);
      } catch (err) {
        if (err instanceof ProviderUnavailable) return page(reply, 503, err.message);
        if (err instanceof AppError && err.status < 500) return page(reply, err.status, err.message);
        throw err;
      }
    },
  );

  app.post(
    '/api/auth/oidc/session',
    {
      config: { auth: 'public' },
      schema: {
        tags,
        summary: 'The web UI takes the session token a sign-in with the provider left for it (once)',
        security: [],
        response: { 200: Type.Ref('AuthToken'), ...errorResponses(401) },
      },
    },
    async (request, reply) => {
      const secret = cookieOf(request, SESSION_COOKIE);
      setCookie(reply, SESSION_COOKIE, '', '/api/auth/oidc/session', 0);
      if (!secret) throw authenticationFailed('No sign-in to finish.');
      const who = await tokens.authenticate(secret);
      return { ...(await tokens.get(who, who.keyId)), secret_key: secret };
    },
  );
}

/** The page a browser sees when signing in with the provider fails: what happened, and a way back. */
function page(reply: FastifyReply, status: number, message: string) {
  const text = message.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return reply
    .status(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in failed · Logscope</title>` +
        `<style>body{font:16px system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em;color:#1f2933}` +
        `a{color:#1d4ed8}</style></head><body><main><h1>Sign-in failed</h1><p>${text}</p>` +
        `<p><a href="/login">Back to the sign-in page</a></p></main></body></html>`,
    );
}
