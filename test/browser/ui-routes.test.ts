import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notFoundHandler } from '../../src/errors/error-handler.js';
import { acceptsHtml, UI_CSP, uiRoutes } from '../../src/http/routes/ui.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// How the server serves the web UI's files, without a browser: a build in a temporary
// folder (the routes on their own), and what the whole app answers to clients that do
// not ask for HTML (which must not change with the UI).

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
const BIG = `export const words = ${JSON.stringify(Array.from({ length: 2000 }, (_, i) => `word${i % 50}`))};\n`;
const INDEX = '<!doctype html><html lang="en"><head><title>Logscope</title></head><body></body></html>';

/** The routes alone, behind a stand-in for the API's auth hook (every route not public: 401). */
async function uiApp(dir: string): Promise<FastifyInstance> {
  const app = Fastify();
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config.auth !== 'public')
      await reply.status(401).send({ detail: 'Authentication credentials were not provided.', code: 'x' });
  });
  app.setNotFoundHandler(notFoundHandler);
  app.get('/api/health', { config: { auth: 'public' } }, async () => ({ status: 'ok' }));
  await app.register(uiRoutes, { dir });
  await app.ready();
  return app;
}

describe('acceptsHtml', () => {
  it('is true for what browsers send when navigating, not for API clients or */*', () => {
    expect(acceptsHtml(BROWSER)).toBe(true);
    expect(acceptsHtml('text/html')).toBe(true);
    expect(acceptsHtml('TEXT/HTML; q=0.5')).toBe(true);
    expect(acceptsHtml('text/html;q=0')).toBe(false);
    expect(acceptsHtml('*/*')).toBe(false);
    expect(acceptsHtml('application/json')).toBe(false);
    // The official Elasticsearch clients (8.x).
    expect(acceptsHtml('application/vnd.elasticsearch+json; compatible-with=8')).toBe(false);
    expect(acceptsHtml(undefined)).toBe(false);
  });
});

describe('the web UI routes with a build', () => {
  let dir: string;
  let app: FastifyInstance;
  const get = (url: string, accept = BROWSER, headers: Record<string, string> = {}) =>
    app.inject({ method: 'GET', url, headers: { accept, ...headers } });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'logscope-ui-'));
    mkdirSync(path.join(dir, 'assets'));
    writeFileSync(path.join(dir, 'index.html'), INDEX);
    writeFileSync(path.join(dir, 'assets', 'index-Ab12Cd34.js'), 'console.log(1);\n');
    // A build's large file with the compressed copies the build writes beside it.
    writeFileSync(path.join(dir, 'assets', 'big-Ef56Gh78.js'), BIG);
    writeFileSync(path.join(dir, 'assets', 'big-Ef56Gh78.js.br'), brotliCompressSync(BIG));
    writeFileSync(path.join(dir, 'assets', 'big-Ef56Gh78.js.gz'), gzipSync(BIG));
    writeFileSync(path.join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    writeFileSync(path.join(dir, '.build-stamp'), 'secret-ish');
    app = await uiApp(dir);
  });
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers the app at / to browsers: index.html, no-cache, the CSP, no auth', async () => {
    const res = await get('/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toBe(INDEX);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['content-security-policy']).toBe(UI_CSP);
    expect(UI_CSP).toBe(
      "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
    );
    expect(res.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
    expect(res.headers.etag).toBeTruthy();
    const again = await get('/', BROWSER, { 'if-none-match': String(res.headers.etag) });
    expect(again.statusCode).toBe(304);
    const head = await app.inject({ method: 'HEAD', url: '/', headers: { accept: BROWSER } });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
  });

  it("answers index.html for the app's own paths (client-side routes)", async () => {
    for (const url of ['/search', '/search?q=error%20host:web-1', '/dashboards/12', '/login?next=%2Ftasks']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toBe('text/html; charset=utf-8');
      expect(res.body, url).toBe(INDEX);
      expect(res.headers['content-security-policy'], url).toBe(UI_CSP);
    }
  });

  it('serves hashed assets for a year, other files revalidated, whatever the client accepts', async () => {
    for (const accept of ['*/*', BROWSER]) {
      const res = await get('/assets/index-Ab12Cd34.js', accept);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^(text|application)\/javascript/);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.body).toBe('console.log(1);\n');
    }
    const icon = await get('/favicon.svg', 'image/avif,image/webp,image/svg+xml,image/*,*/*;q=0.8');
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.headers['cache-control']).toBe('no-cache');
  });

  it('sends a browser that accepts br or gzip the compressed copy, others the file, varying on Accept-Encoding', async () => {
    const br = await get('/assets/big-Ef56Gh78.js', '*/*', { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(br.statusCode).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(br.rawPayload.length).toBeLessThan(BIG.length / 4);
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(BIG);
    const gz = await get('/assets/big-Ef56Gh78.js', '*/*', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString()).toBe(BIG);
    const plain = await get('/assets/big-Ef56Gh78.js', '*/*', { 'accept-encoding': 'identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(BIG);
    expect(plain.headers.vary).toMatch(/accept-encoding/i);
    // A file the build left uncompressed (too small to gain) goes as it is.
    const small = await get('/assets/index-Ab12Cd34.js', '*/*', { 'accept-encoding': 'br' });
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.body).toBe('console.log(1);\n');
  });

  it('answers a missing asset with the JSON 404, never index.html', async () => {
    for (const accept of ['*/*', BROWSER]) {
      const res = await get('/assets/index-gone.js', accept);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ detail: 'No route GET /assets/index-gone.js.', code: 'not_found' });
    }
    expect((await get('/missing.png', 'image/*')).statusCode).toBe(404);
  });

  it('never serves dotfiles or files outside the build', async () => {
    const stamp = await get('/.build-stamp', '*/*');
    expect(stamp.body).not.toContain('secret-ish');
    expect((await get('/.build-stamp')).body).toBe(INDEX);
    for (const url of [
      '/assets/..%2f..%2fetc%2fpasswd',
      '/assets/%2e%2e/%2e%2e/etc/passwd',
      '/..%2f..%2f..%2fetc%2fpasswd',
      '/%2e%2e/%2e%2e/etc/passwd.txt',
    ]) {
      for (const accept of ['*/*', BROWSER]) {
        const res = await get(url, accept);
        expect(res.body, url).not.toContain('root:');
        expect([200, 400, 401, 403, 404], url).toContain(res.statusCode);
        if (res.statusCode === 200) expect(res.body, url).toBe(INDEX);
      }
    }
  });

  it('never serves files outside the build over a real socket (raw dot-dot paths)', async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    const raw = (p: string, accept: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: p, headers: { accept } }, (res) => {
            let body = '';
            res.on('data', (d) => {
              body += d;
            });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          })
          .on('error', reject);
      });
    for (const p of [
      '/assets/../../../../../../etc/passwd',
      '/assets/%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      '/assets/..%2f..%2f..%2f..%2f..%2fetc/passwd',
      '/..%5c..%5c..%5cetc%5cpasswd',
      '/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd.txt',
      '/assets/index-Ab12Cd34.js%00.html',
    ]) {
      for (const accept of ['*/*', BROWSER]) {
        const res = await raw(p, accept);
        expect(res.body, p).not.toContain('root:');
        if (res.status === 200) expect(res.body, p).toBe(INDEX);
        else expect(res.status, p).toBe(404);
      }
    }
  });

  it('leaves the API, /ws, /metrics and Elasticsearch-style paths alone, whatever the client accepts', async () => {
    for (const url of [
      '/api/nothing-here',
      '/api',
      '/ws/live-updates',
      '/metrics',
      '/_bulk',
      '/_nodes/http',
      '/logs/_bulk',
      '/logs/_doc/1',
      '/%5Fbulk',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(401);
      expect(res.headers['content-type'], url).toBe('application/json; charset=utf-8');
    }
    expect((await get('/api/health')).json()).toEqual({ status: 'ok' });
  });

  it('keeps what clients that do not ask for HTML got before: 401 at / and unknown paths', async () => {
    for (const accept of ['application/json', '*/*', '']) {
      for (const url of ['/', '/search', '/whatever']) {
        const res = await app.inject({ method: 'GET', url, headers: accept ? { accept } : {} });
        expect(res.statusCode, `${url} ${accept}`).toBe(401);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      }
    }
    for (const method of ['POST', 'PUT', 'DELETE'] as const) {
      const res = await app.inject({ method, url: '/', headers: { accept: BROWSER } });
      expect(res.statusCode, method).toBe(401);
    }
  });
});

describe('the web UI routes without a build', () => {
  let dir: string;
  let app: FastifyInstance;

  beforeAll(async () => {
    dir = path.join(mkdtempSync(path.join(tmpdir(), 'logscope-ui-')), 'ui');
    app = await uiApp(dir);
  });
  afterAll(async () => {
    await app.close();
    rmSync(path.dirname(dir), { recursive: true, force: true });
  });

  it('answers browsers a page saying to run npm run build, and serves a build made later', async () => {
    for (const url of ['/', '/search']) {
      const res = await app.inject({ method: 'GET', url, headers: { accept: BROWSER } });
      expect(res.statusCode).toBe(503);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-security-policy']).toBe(UI_CSP);
      expect(res.body).toContain('not built');
      expect(res.body).toContain('npm run build');
    }
    const asset = await app.inject({ method: 'GET', url: '/assets/index-x.js' });
    expect(asset.statusCode).toBe(404);
    expect(asset.json().code).toBe('not_found');
    const json = await app.inject({ method: 'GET', url: '/', headers: { accept: 'application/json' } });
    expect(json.statusCode).toBe(401);

    // Built while the server runs: no restart needed.
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'index.html'), INDEX);
    const built = await app.inject({ method: 'GET', url: '/', headers: { accept: BROWSER } });
    expect(built.statusCode).toBe(200);
    expect(built.body).toBe(INDEX);
  });
});

describe('the whole app with the UI routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('answers clients that do not ask for HTML at / as before (401, then the JSON 404)', async () => {
    for (const accept of [
      'application/json',
      'application/vnd.elasticsearch+json; compatible-with=8',
      '*/*',
    ]) {
      const anonymous = await t.app.inject({ method: 'GET', url: '/', headers: { accept } });
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json().code).toBe('not_authenticated');
      const signed = await t.as(t.adminToken, { method: 'GET', url: '/', headers: { accept } });
      expect(signed.statusCode).toBe(404);
      expect(signed.json()).toEqual({ detail: 'No route GET /.', code: 'not_found' });
    }
  });

  it('keeps the JSON 404 for unknown API paths, also for browsers', async () => {
    const res = await t.as(t.adminToken, {
      method: 'GET',
      url: '/api/nothing-here',
      headers: { accept: BROWSER },
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ detail: 'No route GET /api/nothing-here.', code: 'not_found' });
  });

  it('keeps the Elasticsearch probe at /api/ingest/es, also for a browser', async () => {
    const { token } = await t.user('es-shipper');
    for (const accept of ['application/vnd.elasticsearch+json; compatible-with=8', BROWSER]) {
      const res = await t.as(token, { method: 'GET', url: '/api/ingest/es', headers: { accept } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-elastic-product']).toBe('Elasticsearch');
      expect(res.json().tagline).toBe('You Know, for Search');
    }
  });

  it('answers browsers at / with HTML (the app, or the page saying to build it), no token needed', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/', headers: { accept: BROWSER } });
    expect([200, 503]).toContain(res.statusCode);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toBe(UI_CSP);
  });
});
