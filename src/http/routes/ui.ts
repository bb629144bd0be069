import { statSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PACKAGE_ROOT } from '../../config/config.js';

/** Where `npm run build` puts the web UI (Vite's output: index.html and hashed assets/). */
export const UI_DIR = path.join(PACKAGE_ROOT, 'dist', 'ui');

/** The UI page's policy: its own scripts only, the API and live websocket on the same host. */
export const UI_CSP =
  "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self' 'unsafe-inline'";

/** Hashed file names: a changed file has a new name, so a browser may keep one for good. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** First path segments that are never the UI's (the API, websocket, metrics, MCP and OAuth discovery). */
const RESERVED = new Set(['api', 'ws', 'metrics', 'mcp', '.well-known']);

/** The router constraint that picks the UI's routes for a request (see `uiRequestKind`). */
const CONSTRAINT = 'logscopeUi';

type UiKind = 'page' | 'file' | 'none';

/** Whether an Accept header asks for HTML (a browser navigating), not merely accepting anything. */
export function acceptsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  for (const range of accept.split(',')) {
    const [type, ...params] = range.split(';').map((s) => s.trim().toLowerCase());
    if (type !== 'text/html' && type !== 'application/xhtml+xml') continue;
    const q = params.find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}

/**
 * What a request is to the UI: `page` (a browser asking for HTML at a path of the UI's:
 * the app, whatever client-side route it names), `file` (a file-like path such as
 * `/favicon.svg`), or `none`. The API, `/ws`, `/metrics` and Elasticsearch-style paths
 * (any segment starting with `_`, as in `/_bulk` or `/{index}/_doc`) are never the UI's,
 * whatever the client accepts: there, unknown paths keep the API's 401/404 in JSON, and a
 * client that does not ask for HTML (curl, ES clients, shippers) gets at `/` what it
 * always got.
 */
export function uiRequestKind(method: string | undefined, url: string | undefined, accept?: string): UiKind {
  if ((method !== 'GET' && method !== 'HEAD') || !url) return 'none';
  const end = url.indexOf('?');
  const pathname = end === -1 ? url : url.slice(0, end);
  const segments = pathname.split('/').filter((s) => s !== '');
  if (segments.length > 0 && RESERVED.has(segments[0]!.toLowerCase())) return 'none';
  if (segments.some((s) => s.startsWith('_') || s.startsWith('%5F') || s.startsWith('%5f'))) return 'none';
  if (acceptsHtml(accept)) return 'page';
  return segments.length > 0 && segments[segments.length - 1]!.includes('.') ? 'file' : 'none';
}

/**
 * The file of dist/ui a URL path names, relative to it, when it exists: never a dotfile
 * (the build stamp), never outside the folder. Undefined otherwise.
 */
function existingFile(dir: string, url: string): string | undefined {
  const end = url.indexOf('?');
  let pathname: string;
  try {
    pathname = decodeURIComponent(end === -1 ? url : url.slice(0, end));
  } catch {
    return undefined;
  }
  const segments = pathname.split('/').filter((s) => s !== '');
  if (
    segments.length === 0 ||
    segments.some((s) => s.startsWith('.') || s.includes('\\') || s.includes('\0'))
  )
    return undefined;
  const relative = segments.join('/');
  try {
    return statSync(path.join(dir, relative)).isFile() ? relative : undefined;
  } catch {
    return undefined;
  }
}

const NOT_BUILT = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Logscope: web UI not built</title></head>
<body>
<main>
<h1>The Logscope web UI is not built</h1>
<p>This installation has no <code>dist/ui</code>. Run <code>npm run build</code> in the Logscope folder
(with the development dependencies installed), then reload this page.</p>
<p>The API answers meanwhile: see <a href="/api/docs">/api/docs</a>.</p>
</main>
</body>
</html>
`;

/** The headers of every HTML answer of the UI. */
function htmlHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', UI_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('cache-control', 'no-cache');
}

/**
 * The web UI (`dist/ui`, built by `npm run build`), public: the app signs in itself.
 * Hashed `assets/*` are cached for good, everything else revalidates (`no-cache`); text
 * files go brotli- or gzip-compressed to browsers that accept it.
 * A browser asking for HTML at any path outside the API gets the app's index.html (its
 * client-side routes); other clients' unknown paths keep the API's JSON 401/404. Without
 * a build, pages say how to make one. The folder is looked at per request, so building
 * the UI while the server runs needs no restart.
 */
export async function uiRoutes(app: FastifyInstance, opts: { dir?: string } = {}) {
  const dir = opts.dir ?? UI_DIR;
  // Only reply.sendFile (path checks, ETag, ranges, conditional requests): the routes are ours.
  // The build writes each text file's .br and .gz beside it (scripts/build.mjs): a browser
  // that accepts one gets it (Vary: Accept-Encoding), others the file itself.
  await app.register(fastifyStatic, { root: dir, serve: false, suppressWarning: true, preCompressed: true });
  if (!app.hasConstraintStrategy(CONSTRAINT)) {
    app.addConstraintStrategy({
      name: CONSTRAINT,
      storage() {
        const handlers = new Map<string, unknown>();
        return {
          get: (kind: string) => handlers.get(kind) ?? null,
          set: (kind: string, store: unknown) => void handlers.set(kind, store),
        };
      },
      deriveConstraint: (req: { method?: string; url?: string; headers: Record<string, unknown> }) =>
        uiRequestKind(req.method, req.url, req.headers.accept as string | undefined),
    } as Parameters<FastifyInstance['addConstraintStrategy']>[0]);
  }
  const route = { config: { auth: 'public' as const }, schema: { hide: true } };

  /** Sends a file of dist/ui (relative path): hashed assets cached for good, the rest revalidated. */
  const send = (reply: FastifyReply, file: string) => {
    if (file.endsWith('.html')) htmlHeaders(reply);
    else reply.header('x-content-type-options', 'nosniff');
    reply.header('cache-control', file.startsWith('assets/') ? IMMUTABLE : 'no-cache');
    return reply.sendFile(`/${file}`, { cacheControl: false });
  };
  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    const file = existingFile(dir, request.url);
    if (file !== undefined) return send(reply, file);
    if (existingFile(dir, '/index.html') === undefined) {
      return htmlHeaders(reply).status(503).type('text/html; charset=utf-8').send(NOT_BUILT);
    }
    return send(reply, 'index.html');
  };
  const file = async (request: FastifyRequest, reply: FastifyReply) => {
    const found = existingFile(dir, request.url);
    return found === undefined ? reply.callNotFound() : send(reply, found);
  };

  // The app's pages: a browser asking for HTML anywhere outside the API.
  for (const url of ['/', '/*']) app.get(url, { ...route, constraints: { [CONSTRAINT]: 'page' } }, page);
  // Files at the top (favicon, manifest) for requests that do not ask for HTML.
  app.get('/*', { ...route, constraints: { [CONSTRAINT]: 'file' } }, file);
  // Hashed assets, whatever the client accepts.
  app.get('/assets/*', route, file);
}
