import { readFileSync } from 'node:fs';
import path from 'node:path';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { PACKAGE_ROOT } from '../../core/package-root.js';
import { ErrorSchema } from '../schemas/common.js';

/** The query-language reference, `docs/query-language.md` in the package. */
const REFERENCE_PATH = path.join(PACKAGE_ROOT, 'docs', 'query-language.md');

const INTRO =
  'Log retrieval and analysis: queries, dashboards, tasks, tokens, reports, events.\n\n' +
  'Requests authenticate with `Authorization: token <secret_key>` (or `Bearer <secret_key>`); ' +
  '`POST /api/auth/login` exchanges a username and password for a token, and `/api/health`, ' +
  '`/metrics`, `/api/schema` and `/api/docs` need none. Queries are created with ' +
  '`POST /api/query`; the language of their `query` parameter and the parameters and results ' +
  'of every query type are described below.';

/**
 * The reference as Swagger UI shows it: its own markers on code blocks (which the test
 * suite uses to find the examples) become plain code blocks, and links to headings become
 * emphasis, since the rendered description has no heading anchors.
 */
export function referenceForUi(markdown: string): string {
  return markdown
    .replace(/^```json logscope-request$/gm, '```json')
    .replace(/^```logscope-(query|invalid)$/gm, '```')
    .replace(/\[([^\]]+)\]\(#[^)]*\)/g, '*$1*');
}

/** The OpenAPI `info.description`: the introduction, then the query-language reference when readable. */
export function apiDescription(read: () => string = () => readFileSync(REFERENCE_PATH, 'utf8')): {
  text: string;
  reference: boolean;
} {
  try {
    return { text: `${INTRO}\n\n---\n\n${referenceForUi(read())}`, reference: true };
  } catch {
    return { text: INTRO, reference: false };
  }
}

/**
 * The static CSP of @fastify/swagger-ui (`staticCSP: true`) ends with
 * `upgrade-insecure-requests`, which makes a browser fetch the page's scripts and styles
 * over https: served over plain HTTP on any host but localhost, the page stays blank.
 * Every other directive is kept.
 */
export const withoutUpgradeInsecureRequests = (csp: string): string =>
  csp
    .split(';')
    .map((d) => d.trim())
    .filter((d) => d !== '' && d.toLowerCase() !== 'upgrade-insecure-requests')
    .map((d) => `${d};`)
    .join(' ');

/** OpenAPI 3.1 generated from the route schemas (never written by hand), served with a UI. */
export const openapiPlugin = fp(async (app: FastifyInstance, opts: { version: string }) => {
  app.addSchema(ErrorSchema);
  const description = apiDescription();
  if (!description.reference) {
    app.log.warn(`query-language reference not found at ${REFERENCE_PATH}; /api/docs shows without it`);
  }
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Logscope API',
        version: opts.version,
        description: description.text,
      },
      components: {
        securitySchemes: {
          token: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'Value: `token <secret_key>` (or `Bearer <secret_key>`).',
          },
        },
      },
      security: [{ token: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _base, _frag, i) => String(json.$id ?? json.title ?? `def-${i}`),
    },
  });
  // The interactive reference is public, like the document it renders.
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...(route.config ?? {}), auth: 'public' };
    });
    await docs.register(swaggerUi, {
      routePrefix: '/api/docs',
      staticCSP: true,
      transformStaticCSP: withoutUpgradeInsecureRequests,
    });
  });
  app.get('/api/schema', { config: { auth: 'public' }, schema: { hide: true } }, async () => app.swagger());
});
