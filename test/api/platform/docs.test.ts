import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors/errors.js';
import {
  apiDescription,
  referenceForUi,
  withoutUpgradeInsecureRequests,
} from '../../../src/http/plugins/openapi.js';
import { validateQuery } from '../../../src/query/validate.js';
import { parseQuery, parseTableQuery, QuerySyntaxError } from '../../../src/syntax/parse-query.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { event, HOUR, seedWeb, T0 } from '../../helpers/seed.js';

/**
 * docs/query-language.md is the user's reference of the query language; its examples are
 * checked here against the real parser and run against a real app, so a doc example that
 * stops parsing fails the suite. Fenced code blocks carry markers:
 * - `logscope-query`: every non-empty line is a query string that must parse and run;
 * - `logscope-invalid`: every non-empty line is a query string that must be refused (400);
 * - `json logscope-request`: a `POST /api/query` body that must validate and run.
 * Blocks without a marker (sample answers) are not checked.
 */

const DOC_URL = new URL('../../../docs/query-language.md', import.meta.url);
const DOC = readFileSync(DOC_URL, 'utf8');

interface Block {
  readonly info: string;
  readonly body: string;
  /** 1-based line of the opening fence, for messages. */
  readonly line: number;
}

function fencedBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(.*)$/.exec(lines[i] as string);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i] as string);
    if (i >= lines.length) throw new Error(`unclosed code block at line ${start + 1}`);
    blocks.push({ info: (open[1] ?? '').trim(), body: body.join('\n'), line: start + 1 });
  }
  return blocks;
}

const MARKERS = [
  'logscope-query',
  'logscope-invalid',
  'logscope-table',
  'logscope-table-invalid',
  'json logscope-request',
] as const;
const BLOCKS = fencedBlocks(DOC);

const linesOf = (marker: string) =>
  BLOCKS.filter((b) => b.info === marker).flatMap((b) =>
    b.body
      .split('\n')
      .map((query, i) => ({ query, line: b.line + 1 + i }))
      .filter((q) => q.query.trim() !== ''),
  );

const QUERIES = linesOf('logscope-query');
const INVALID = linesOf('logscope-invalid');
const TABLES = linesOf('logscope-table');
const TABLES_INVALID = linesOf('logscope-table-invalid');
const REQUESTS = BLOCKS.filter((b) => b.info === 'json logscope-request').map((b) => ({
  line: b.line,
  body: JSON.parse(b.body) as { type: string; params: Record<string, unknown> },
}));

const label = (x: { line: number; query?: string }) => `line ${x.line}${x.query ? `: ${x.query}` : ''}`;

describe('docs/query-language.md examples', () => {
  it('marks its examples consistently and has enough of each kind', () => {
    const unknown = BLOCKS.filter(
      (b) => b.info.includes('logscope') && !(MARKERS as readonly string[]).includes(b.info),
    );
    expect(unknown.map((b) => `line ${b.line}: ${b.info}`)).toEqual([]);
    expect(QUERIES.length).toBeGreaterThan(100);
    expect(INVALID.length).toBeGreaterThan(10);
    expect(TABLES.length).toBeGreaterThan(25);
    expect(TABLES_INVALID.length).toBeGreaterThan(10);
    expect(REQUESTS.map((r) => r.body.type)).toEqual(
      expect.arrayContaining(['Search', 'TopN', 'LastN', 'Summary', 'Timeline', 'Table']),
    );
  });

  it.each(QUERIES.map((q) => [label(q), q] as const))('parses %s', (_, { query }) => {
    expect(() => parseQuery(query)).not.toThrow();
  });

  it.each(INVALID.map((q) => [label(q), q] as const))('refuses %s', (_, { query }) => {
    expect(() => parseQuery(query)).toThrow(QuerySyntaxError);
  });

  it.each(TABLES.map((q) => [label(q), q] as const))('parses the pipes of %s', (_, { query }) => {
    expect(() => parseTableQuery(query)).not.toThrow();
    // Pipes are for Table only.
    expect(() => parseQuery(query)).toThrow(/query type Table/);
  });

  it.each(TABLES_INVALID.map((q) => [label(q), q] as const))('refuses the pipes of %s', (_, { query }) => {
    expect(() => parseTableQuery(query)).toThrow(/position \d+/);
  });

  it.each(REQUESTS.map((r) => [label(r), r] as const))('validates the request at %s', (_, { body }) => {
    expect(() => validateQuery(body)).not.toThrow();
  });

  it('every section the reference promises is there', () => {
    for (const heading of [
      '## Syntax overview',
      '## Fields',
      '## Operators',
      '### Regular expressions (`regex`)',
      '### CIDR blocks (`cidr`)',
      '## Severity',
      '## Time ranges',
      '## Sorting',
      '### Search',
      '### TopN',
      '### LastN',
      '### Summary',
      '### Timeline',
      '### Patterns',
      '### Table',
      '## Pipes',
      '### stats',
      '### top',
      '### timechart',
      '### patterns',
      '### fields, rename',
      '### sort, limit',
      '### where',
      '### extract, rex',
      '### eval',
      '## Limits',
      '## Differences from Lucene / KQL',
    ]) {
      expect(DOC.split('\n')).toContain(heading);
    }
    // Links inside the document point at headings it has (GitHub's anchor rule).
    const anchors = new Set(
      DOC.split('\n')
        .filter((l) => l.startsWith('#'))
        .map((l) =>
          l
            .replace(/^#+\s*/, '')
            .toLowerCase()
            .replace(/[^\p{L}\p{N}\s_-]/gu, '')
            .replace(/\s/g, '-'),
        ),
    );
    const links = [...DOC.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) expect(anchors, link).toContain(link);
  });
});

describe('docs/query-language.md examples against the app', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    await seedWeb(t);
    await t.rt.events.append([
      event({
        ts: T0 + 1500,
        host: 'db-1',
        app: 'postgres',
        severity: 'critical',
        message: 'could not write block: No space left on device',
        user: 'root',
        src_ip: '192.168.1.20',
        fields: { tags: '["prod","eu"]', 'http.duration_ms': '312.5', offset: '-1' },
      }),
      event({
        ts: T0 + 2500,
        host: 'web-01',
        app: 'sshd',
        severity: 'notice',
        message: 'Connection refused by 10.0.0.1',
        user: 'alice@example.com',
        src_ip: '2001:db8::7',
        fields: { 'sd.origin.ip': '192.0.2.1', 'kubernetes.pod.name': 'api-7f9c' },
      }),
    ]);
  });
  afterAll(() => t.close());

  const post = (body: object, qs = '') =>
    t.as(t.adminToken, { method: 'POST', url: `/api/query${qs}`, payload: body });

  it('runs every pipe example as a Table', async () => {
    const failures: string[] = [];
    for (const q of TABLES) {
      const res = await post({ type: 'Table', params: { time_range: HOUR, query: q.query } });
      const body = res.json();
      if (res.statusCode !== 200 || body.status !== 'SUCCESS' || !Array.isArray(body.results?.rows))
        failures.push(
          `${label(q)} → ${res.statusCode} ${body.status ?? ''} ${body.detail ?? body.error ?? ''}`,
        );
    }
    expect(failures).toEqual([]);
  });

  it('runs every query example as a Search', async () => {
    const failures: string[] = [];
    for (const q of QUERIES) {
      const res = await post({ type: 'Search', params: { time_range: HOUR, query: q.query, page_size: 5 } });
      const body = res.json();
      if (res.statusCode !== 200 || body.status !== 'SUCCESS') {
        failures.push(
          `${label(q)} → ${res.statusCode} ${body.status ?? ''} ${body.detail ?? body.error ?? ''}`,
        );
      }
    }
    expect(failures).toEqual([]);
  });

  // What the reference says a query matches, on the events seeded above (600 nginx events
  // on web-1..3, 100 of them status 500 / error, plus the two events added here).
  it.each<[string, number]>([
    ['refused', 1],
    ['REFUSED', 1],
    ['"connection refused"', 1],
    ['message:refused', 1],
    ['message:/^Connection refused$/', 0],
    ['message:/^Connection refused/', 1],
    ['GET status', 600],
    ['GET refused', 0],
    ['host:web-01', 1],
    ['host:WEB-01', 0],
    ['host:web*', 601],
    ['host:*WEB*', 601],
    ['user:alice*', 1],
    ['user:ALICE*', 0],
    ['user:*ALICE*', 1],
    ['severity:err', 100],
    ['severity:>=3', 101],
    ['severity:>=warn', 101],
    ['severity:<=3', 601],
    ['src_ip:10.0.0.0/8', 600],
    ['src_ip:2001:db8::/32', 1],
    ['src_ip:"10.0.0.0/8"', 0],
    ['tags:*prod*', 1],
    ['NOT _exists_:user', 600],
    ['-user:root', 601],
    ['status:5*', 100],
    ['status:[500 TO 599]', 100],
    ['status:{200 TO 500}', 100],
    ['http.duration_ms:>300', 1],
    ['http.duration_ms:>"4"', 0],
    ['offset:-1', 1],
    ['host:(web-1 OR web-01)', 201],
  ])('%s matches %i events, as the reference says', async (query, total) => {
    const res = await post({ type: 'Search', params: { time_range: HOUR, query, page_size: 1 } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results.total).toBe(total);
  });

  it('refuses every invalid example with 400 naming params.query', async () => {
    for (const q of INVALID) {
      const res = await post({ type: 'Search', params: { query: q.query } });
      expect(res.statusCode, label(q)).toBe(400);
      expect(Object.keys(res.json().errors ?? {}), label(q)).toEqual(['params.query']);
    }
  });

  it('runs every request example', async () => {
    for (const r of REQUESTS) {
      const res = await post(r.body);
      const body = res.json();
      expect([200, 202], `${label(r)}: ${res.body}`).toContain(res.statusCode);
      expect(body.status, `${label(r)}: ${body.error}`).not.toBe('ERROR');
      expect(body.type).toBe(r.body.type);
    }
  });

  it('answers a syntax error as the reference shows it', async () => {
    const res = await post({ type: 'Search', params: { query: 'host:(a' } });
    expect(res.statusCode).toBe(400);
    const detail =
      'Syntax error at position 7 (line 1, column 8): expected ")", AND, OR or a value but found end of input';
    expect(res.json()).toMatchObject({
      detail,
      code: 'invalid_query',
      errors: { 'params.query': [detail] },
    });
    expect(DOC).toContain(JSON.stringify(detail));
  });

  it('validate_only of a request example fills in the defaults the reference lists', async () => {
    const res = await post({ type: 'Search', params: {} }, '?validate_only=true');
    expect(res.statusCode).toBe(200);
    expect(res.json().params).toEqual({
      time_range: { preset: 'last_hour' },
      filter: [],
      query: '',
      sort: ['-ts'],
      page: 1,
      page_size: 50,
    });
  });

  it('parse errors thrown by the examples are 400 AppErrors', () => {
    for (const q of INVALID) {
      try {
        parseQuery(q.query);
      } catch (error) {
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).status).toBe(400);
      }
    }
  });
});

describe('/api/docs', () => {
  let t: TestApp;
  let port: number;
  const HOST = 'logs.example.internal:8080';
  const ORIGIN = `http://${HOST}`;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  /** A plain-HTTP GET of `path` on the test server, as a browser at ORIGIN sends it. */
  const get = (path: string) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path, headers: { host: HOST } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
    });

  /** Follows redirects like a browser (resolving Location against the current URL). */
  async function browse(start: string) {
    let url = new URL(start, ORIGIN);
    for (let hops = 0; hops < 5; hops++) {
      const res = await get(url.pathname + url.search);
      if (res.status >= 300 && res.status < 400 && res.headers.location) {
        url = new URL(res.headers.location, url);
        expect(url.origin).toBe(ORIGIN);
        continue;
      }
      return { url, ...res };
    }
    throw new Error('too many redirects');
  }

  it.each(['/api/docs', '/api/docs/', '/api/docs/static/index.html'])(
    '%s over plain HTTP on another host name: a CSP without upgrade-insecure-requests, and every asset loads',
    async (path) => {
      const page = await browse(path);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toMatch(/text\/html/);
      const csp = String(page.headers['content-security-policy'] ?? '');
      expect(csp).toMatch(/default-src 'self'/);
      expect(csp).not.toMatch(/upgrade-insecure-requests/i);

      const assets = [...page.body.matchAll(/<(?:script|link)\b[^>]*?\b(?:src|href)="([^"]+)"/g)].map(
        (m) => new URL(m[1] as string, page.url),
      );
      const kinds = assets.map((a) => a.pathname.split('.').pop());
      expect(kinds).toEqual(expect.arrayContaining(['css', 'js']));
      for (const asset of assets) {
        expect(asset.origin, asset.href).toBe(ORIGIN);
        const res = await get(asset.pathname);
        expect(res.status, asset.href).toBe(200);
        expect(String(res.headers['content-security-policy'] ?? '')).not.toMatch(
          /upgrade-insecure-requests/i,
        );
      }
      // The document the page loads (swagger-initializer.js resolves `./json` against the
      // page URL with a trailing slash).
      const base = page.url.href.endsWith('/') ? page.url.href : `${page.url.href}/`;
      const spec = await get(new URL('json', base).pathname);
      expect(spec.status).toBe(200);
      expect(JSON.parse(spec.body).openapi).toBe('3.1.0');
    },
  );

  it('shows the query-language reference in the OpenAPI description', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/docs/json' });
    const description: string = res.json().info.description;
    expect(description).toContain('# Query language and query types');
    expect(description).toContain('## Differences from Lucene / KQL');
    expect(description).toBe(apiDescription().text);
    // Markers and heading links are the repository's; Swagger UI gets plain markdown.
    expect(description).not.toMatch(/logscope-(query|invalid|request)/);
    expect(description).not.toMatch(/\]\(#/);
    expect(description).toContain(referenceForUi(DOC));
    const schema = await t.app.inject({ method: 'GET', url: '/api/schema' });
    expect(schema.json().info.description).toBe(description);
  });

  it('describes itself without pointing outside the repository', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/schema' })).json();
    const texts: string[] = [];
    const walk = (v: unknown, key = '') => {
      if (typeof v === 'string') {
        if (key === 'description' || key === 'summary') texts.push(v);
      } else if (Array.isArray(v)) for (const x of v) walk(x);
      else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
    };
    walk(doc);
    expect(texts.length).toBeGreaterThan(50);
    const outside = /§|\.\.\/|\b(?:API|ARCHITECTURE|STYLE)\.md\b|\bshared\/|service interface|the seed\b/i;
    expect(texts.filter((s) => outside.test(s))).toEqual([]);
  });

  it('falls back to the introduction alone when the reference cannot be read', () => {
    const d = apiDescription(() => {
      throw new Error('ENOENT');
    });
    expect(d.reference).toBe(false);
    expect(d.text).toMatch(/^Log retrieval and analysis/);
  });

  it('removes only upgrade-insecure-requests from a CSP', () => {
    expect(
      withoutUpgradeInsecureRequests(
        "default-src 'self'; img-src 'self' data:; upgrade-insecure-requests; object-src 'none';",
      ),
    ).toBe("default-src 'self'; img-src 'self' data:; object-src 'none';");
  });
});
