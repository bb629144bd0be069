import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, permissionDenied } from '../../errors/errors.js';
import { type Authenticator, presentedKey } from '../../http/plugins/auth.js';
import type { McpService } from './mcp-service.js';
import { PROTOCOL_VERSIONS } from './mcp-service.js';

export interface McpRouteOptions {
  mcp: McpService;
  tokens: Authenticator;
  /** Exact origins a browser may call from (mcpAllowedOrigins). */
  allowedOrigins: ReadonlySet<string>;
}

/** What a key presented in a header may look like (as the auth plugin checks). */
const KEY_TEXT = /^[\x21-\x7e]{1,256}$/;

/**
 * 401 for every refused token: no header, an unknown, expired or deleted one, or an INGEST
 * one (to an MCP client a 401 says "this token does not open this server").
 */
const refused = (message: string) =>
  new AppError(401, 'authentication_failed', message, undefined, {
    'WWW-Authenticate': 'Bearer realm="logscope"',
  });

const ALLOW_HEADERS = 'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id';

const jsonRpcError = (code: number, message: string) => ({
  jsonrpc: '2.0',
  id: null,
  error: { code, message },
});

/**
 * `/mcp` (docs/mcp.md): the Streamable HTTP transport, stateless. In its own scope: only
 * JSON bodies are read (as text, so a bad one is JSON-RPC's -32700, not the API's 400),
 * and its own hook checks the origin, then the token, before any body is read.
 */
export async function mcpRoutes(app: FastifyInstance, opts: McpRouteOptions) {
  const { mcp, tokens, allowedOrigins } = opts;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
    done(null, body),
  );

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const origin = request.headers.origin;
    if (origin !== undefined) {
      if (!allowedOrigins.has(origin))
        throw permissionDenied(`Origin ${origin.slice(0, 200)} may not call /mcp (mcpAllowedOrigins).`);
      reply.header('Access-Control-Allow-Origin', origin);
      reply.header('Vary', 'Origin');
      reply.header('Access-Control-Expose-Headers', 'www-authenticate, mcp-session-id, mcp-protocol-version');
    }
    if (request.method !== 'POST') return;
    const key = presentedKey(request, false);
    if (key === undefined)
      throw refused('Authentication credentials were not provided: send "Authorization: Bearer <token>".');
    if (!key || !KEY_TEXT.test(key)) throw refused('Malformed Authorization header: use "Bearer <token>".');
    let who: Awaited<ReturnType<Authenticator['authenticate']>>;
    try {
      who = await tokens.authenticate(key);
    } catch (err) {
      if (err instanceof AppError && err.status === 401) throw refused(err.message);
      throw err;
    }
    if (who.tokenType !== 'USER') throw refused('Invalid token.');
    request.identity = who;
  });

  const route = { config: { auth: 'public' as const }, schema: { hide: true } };

  app.options('/mcp', route, async (_request, reply) =>
    reply
      .code(204)
      .header('Access-Control-Allow-Methods', 'POST, OPTIONS')
      .header('Access-Control-Allow-Headers', ALLOW_HEADERS)
      .header('Access-Control-Max-Age', '600')
      .send(),
  );

  for (const method of ['GET', 'DELETE'] as const)
    app.route({
      ...route,
      method,
      url: '/mcp',
      handler: async (_request, reply) =>
        reply.code(405).header('Allow', 'POST').type('application/json; charset=utf-8').send({
          detail: 'Method not allowed: /mcp takes POST only (stateless: no stream, no session).',
          code: 'method_not_allowed',
        }),
    });

  app.post('/mcp', route, async (request, reply) => {
    const who = request.identity;
    if (!who) throw refused('Authentication credentials were not provided.');
    const type = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json')
      throw new AppError(415, 'unsupported_media_type', 'POST /mcp takes Content-Type: application/json.');
    const version = request.headers['mcp-protocol-version'];
    if (version !== undefined && !(PROTOCOL_VERSIONS as readonly string[]).includes(String(version)))
      return reply
        .code(400)
        .send(
          jsonRpcError(
            -32600,
            `Unsupported MCP-Protocol-Version ${String(version).slice(0, 50)}; served: ${PROTOCOL_VERSIONS.join(', ')}.`,
          ),
        );
    let message: unknown;
    try {
      message = JSON.parse(typeof request.body === 'string' ? request.body : '');
    } catch {
      return reply.code(400).send(jsonRpcError(-32700, 'Parse error: the body is not JSON.'));
    }
    // The connection closing stops the call's query.
    const closed = new AbortController();
    const onClose = () => {
      if (!reply.raw.writableFinished) closed.abort();
    };
    reply.raw.once('close', onClose);
    const answer = await mcp.handle(message, who, { via: 'mcp', address: request.ip ?? null }, closed.signal);
    reply.raw.off('close', onClose);
    if (answer.status === 202) return reply.code(202).send();
    return reply.code(answer.status).type('application/json; charset=utf-8').send(answer.body);
  });
}

/** `/mcp` with `mcpEnabled: false`: 404 to everyone, token or not. */
export async function mcpDisabledRoutes(app: FastifyInstance) {
  app.all('/mcp', { config: { auth: 'public' }, schema: { hide: true } }, async (request, reply) =>
    reply
      .code(404)
      .type('application/json; charset=utf-8')
      .send({
        detail: `No route ${request.method} /mcp: MCP is turned off (mcpEnabled).`,
        code: 'not_found',
      }),
  );
}

/** `/.well-known/oauth-*`: no OAuth here, so a client looking for it after a 401 stops and says so. */
export async function oauthDiscoveryRoutes(app: FastifyInstance) {
  app.get(
    '/.well-known/oauth-*',
    { config: { auth: 'public' }, schema: { hide: true } },
    async (request, reply) =>
      reply
        .code(404)
        .type('application/json; charset=utf-8')
        .send({
          detail: `No route ${request.method} ${request.url.split('?')[0]}: Logscope takes tokens (Authorization: Bearer <token>), not OAuth.`,
          code: 'not_found',
        }),
  );
}
