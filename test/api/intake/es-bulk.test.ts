import { Client, errors } from '@elastic/elasticsearch';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, permissionDenied, tooManyRequests } from '../../../src/errors/errors.js';
import { esErrorHandler } from '../../../src/features/intake/protocols/es-bulk-routes.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { messageOf, storedEvents } from '../../helpers/events.js';

describe(`Elasticsearch-compatible intake on ${BACKEND}`, () => {
  let t: TestApp;
  let es: Client;
  let ingestToken: string;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
    ingestToken = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'filebeat' }))
      .secret_key;
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    es = new Client({ node: `${address}/api/ingest/es`, auth: { apiKey: ingestToken } });
  });
  afterAll(async () => {
    await es.close();
    await t.close();
  });

  it('answers the probes shippers make before sending', async () => {
    const info = await es.info();
    expect(info.version.number).toMatch(/^8\./);
    expect(await es.ping()).toBe(true);
    const health = await es.cluster.health();
    expect(health.status).toBe('green');
    const tmpl = await es.indices.putIndexTemplate({ name: 'filebeat', index_patterns: ['filebeat-*'] });
    expect(tmpl.acknowledged).toBe(true);
  });

  it('stores documents sent with the official client bulk helper', async () => {
    const docs = Array.from({ length: 250 }, (_, i) => ({
      '@timestamp': new Date(Date.UTC(2026, 10, 21, 12, 0, i)).toISOString(),
      message: `bulk helper doc ${i}`,
      host: { name: 'es-host' },
      log: { level: i % 10 ? 'info' : 'error' },
    }));
    const result = await es.helpers.bulk({
      datasource: docs,
      onDocument: () => ({ index: { _index: 'filebeat-8.17.0' } }),
      flushBytes: 10_000,
    });
    expect(result.total).toBe(250);
    expect(result.successful).toBe(250);
    expect(result.failed).toBe(0);
    const rows = await storedEvents(t, (e) => messageOf(e).startsWith('bulk helper doc'));
    expect(rows).toHaveLength(250);
    expect(rows[0]).toMatchObject({ host: 'es-host' });
    expect(JSON.stringify(rows[0]?.fields)).toContain('filebeat-8.17.0');
    expect(rows.filter((r) => r.severity === 'error')).toHaveLength(25);
  });

  it('reports per-item failures in the ES shape and stores the rest', async () => {
    const res = await es.bulk({
      operations: [
        { index: { _index: 'logs' } },
        { message: 'es good 1' },
        { delete: { _index: 'logs', _id: 'x' } },
        { index: { _index: 'logs' } },
        'not an object',
        { create: { _index: 'logs' } },
        { message: 'es good 2' },
      ],
    });
    expect(res.errors).toBe(true);
    expect(res.items).toHaveLength(4);
    expect(res.items[0]?.index?.status).toBe(201);
    const evId = res.items[0]?.index?._id as string;
    expect((await t.as(t.adminToken, { method: 'GET', url: `/api/events/${evId}` })).json().message).toBe(
      'es good 1',
    );
    expect(res.items[1]?.delete?.status).toBe(400);
    expect(res.items[2]?.index?.error?.type).toBeDefined();
    expect(res.items[3]?.create?.status).toBe(201);
    expect(await storedEvents(t, (e) => ['es good 1', 'es good 2'].includes(messageOf(e)))).toHaveLength(2);
  });

  it('refuses bad credentials and malformed bodies', async () => {
    const bad = new Client({
      node: es.connectionPool.connections[0]?.url.toString() ?? '',
      auth: { apiKey: 'nope' },
    });
    await expect(bad.info()).rejects.toMatchObject({ meta: { statusCode: 401 } });
    await bad.close();
    const basic = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/es/_bulk',
      headers: {
        authorization: `Basic ${Buffer.from(`elastic:${ingestToken}`).toString('base64')}`,
        'content-type': 'application/x-ndjson',
      },
      payload: '{"index":{}}\n{"message":"via basic auth"}\n',
    });
    expect(basic.statusCode).toBe(200);
    expect(basic.headers['x-elastic-product']).toBe('Elasticsearch');
    const garbage = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/es/_bulk',
      headers: { authorization: `token ${ingestToken}`, 'content-type': 'application/x-ndjson' },
      payload: '{"frobnicate":{}}\n{"message":"x"}\n',
    });
    expect(garbage.statusCode).toBe(400);
    expect(garbage.json().error.type).toBeDefined();
  });

  it('stores single documents from the official client index() and create(), answering 201', async () => {
    const auto = await es.index({
      index: 'app-logs',
      document: { message: 'es single auto', level: 'warn' },
    });
    expect(auto).toMatchObject({ _index: 'app-logs', result: 'created', _version: 1, _primary_term: 1 });
    expect(auto._shards).toEqual({ total: 1, successful: 1, failed: 0 });
    const withId = await es.index({
      index: 'app-logs',
      id: 'client-1',
      document: { message: 'es single id' },
    });
    const created = await es.create({
      index: 'app-logs',
      id: 'client-2',
      document: { message: 'es single create' },
    });
    expect(created.result).toBe('created');
    const raw = await es.transport.request(
      { method: 'POST', path: '/app-logs/_create/client-3', body: { message: 'es single post create' } },
      { meta: true },
    );
    expect(raw.statusCode).toBe(201);
    expect(raw.headers.location).toBe(`/api/ingest/es/app-logs/_doc/${(raw.body as { _id: string })._id}`);

    // `_id` is the event's id: the event is there, with the index and the client's id kept.
    const read = async (id: string) =>
      (await t.as(t.adminToken, { method: 'GET', url: `/api/events/${id}` })).json();
    expect(await read(auto._id)).toMatchObject({
      message: 'es single auto',
      severity: 'warning',
      es_index: 'app-logs',
    });
    expect(await read(withId._id)).toMatchObject({ message: 'es single id', es_id: 'client-1' });
    expect(await read(created._id)).toMatchObject({ message: 'es single create', es_id: 'client-2' });
    expect(await storedEvents(t, (e) => messageOf(e).startsWith('es single'))).toHaveLength(4);
  });

  it('ignores extra keys in bulk action lines (winston-elasticsearch sends "attempts")', async () => {
    const body = Array.from(
      { length: 50 },
      (_, i) =>
        `{"index":{"_index":"logs-winston"},"attempts":0}\n{"message":"winston ${i}","severity":"info"}\n`,
    ).join('');
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/es/_bulk',
      headers: { authorization: `token ${ingestToken}`, 'content-type': 'application/x-ndjson' },
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().errors).toBe(false);
    expect(await storedEvents(t, (e) => messageOf(e).startsWith('winston '))).toHaveLength(50);
  });

  it('never answers success without storing: unknown paths 404, wrong methods 405, in the ES shape', async () => {
    const before = (await storedEvents(t)).length;
    const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: string) =>
      t.app.inject({
        method,
        url: `/api/ingest/es${url}`,
        headers: { authorization: `token ${ingestToken}`, 'content-type': 'application/json' },
        ...(payload === undefined ? {} : { payload }),
      });
    const doc = '{"message":"must not be pretended"}';
    for (const [method, url, status] of [
      ['POST', '/logs/_search', 404],
      ['PUT', '/logs/_mapping', 404],
      ['POST', '/logs/_doc/1/_whatever', 404],
      ['GET', '/logs/_doc/1', 405],
      ['DELETE', '/logs/_doc/1', 405],
      ['GET', '/_bulk', 405],
      ['POST', '/logs/_update/1', 400],
      ['POST', '/_security/_doc', 400],
      ['PUT', '/_nope', 400],
    ] as const) {
      const res = await call(method, url, method === 'GET' || method === 'DELETE' ? undefined : doc);
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(status);
      const body = res.json();
      expect(body.status).toBe(status);
      expect(body.error.type).toMatch(/_exception$/);
      expect(body.error.root_cause[0]).toEqual({ type: body.error.type, reason: body.error.reason });
      if (status === 405) expect(res.headers.allow).toBeDefined();
    }
    expect((await storedEvents(t)).length).toBe(before);
    // The official client surfaces these as ResponseErrors with the type.
    const err: unknown = await es.transport
      .request({ method: 'POST', path: '/logs/_search', body: {} })
      .catch((e: unknown) => e);
    if (!(err instanceof errors.ResponseError)) throw new Error(`expected a ResponseError, got ${err}`);
    expect(err.meta.statusCode).toBe(404);
    expect(err.body.error.type).toBe('no_handler_found_exception');
  });

  it('reports the address it really listens on in _nodes', async () => {
    const url = new URL(es.connectionPool.connections[0]?.url.toString() ?? '');
    const nodes = await es.nodes.info({ metric: 'http' });
    const node = Object.values(nodes.nodes)[0];
    expect(node?.http?.publish_address).toBe(`127.0.0.1:${url.port}`);
    expect(url.port).not.toBe('8080');
    const viaHost = await t.app.inject({
      method: 'GET',
      url: '/api/ingest/es/_nodes',
      headers: { authorization: `token ${ingestToken}`, host: 'logs.example.org:9201' },
    });
    expect(
      Object.values(viaHost.json().nodes as Record<string, { http: { publish_address: string } }>)[0]?.http
        .publish_address,
    ).toBe('logs.example.org:9201');
  });

  it('renders auth, media type and body errors in the ES shape, keeping WWW-Authenticate', async () => {
    const post = (headers: Record<string, string>, payload = '{"index":{}}\n{"message":"x"}\n') =>
      t.app.inject({ method: 'POST', url: '/api/ingest/es/_bulk', headers, payload });
    const none = await post({ 'content-type': 'application/x-ndjson' });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Token');
    expect(none.json()).toMatchObject({ status: 401, error: { type: 'security_exception' } });
    expect(none.json().error.root_cause[0].type).toBe('security_exception');
    const bad = await post({ 'content-type': 'application/x-ndjson', authorization: 'ApiKey nope' });
    expect(bad.statusCode).toBe(401);
    expect(bad.json().error.reason).toMatch(/token/i);
    const text = await post({ 'content-type': 'text/plain', authorization: `token ${ingestToken}` });
    expect(text.statusCode).toBe(415);
    expect(text.json()).toMatchObject({ status: 415, error: { type: 'media_type_header_exception' } });
    expect(text.json().error.reason).toMatch(/text\/plain.*application\/x-ndjson/);
    const notJson = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/es/logs/_doc',
      headers: { 'content-type': 'application/json', authorization: `token ${ingestToken}` },
      payload: '{"message": nope}',
    });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json()).toMatchObject({ status: 400, error: { type: 'mapper_parsing_exception' } });
  });
});

describe(`Elasticsearch intake limits on ${BACKEND}`, () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_INGEST_BODY_LIMIT: '4096' });
    token = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'beats' })).secret_key;
  });
  afterAll(() => t.close());

  it('answers 413 and (shutting down) 503 in the ES shape', async () => {
    const big = await t.app.inject({
      method: 'POST',
      url: '/api/ingest/es/_bulk',
      headers: { authorization: `token ${token}`, 'content-type': 'application/x-ndjson' },
      payload: `{"index":{}}\n{"message":"${'x'.repeat(5000)}"}\n`,
    });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ status: 413, error: { type: 'content_too_long_exception' } });
    await t.rt.platform.batcher.close();
    const closed = await t.app.inject({
      method: 'PUT',
      url: '/api/ingest/es/logs/_doc/1',
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      payload: '{"message":"too late"}',
    });
    expect(closed.statusCode).toBe(503);
    expect(closed.headers['retry-after']).toBeDefined();
    expect(closed.json()).toMatchObject({ status: 503, error: { type: 'unavailable_shards_exception' } });
  });
});

describe('the ES error renderer', () => {
  it.each([
    [permissionDenied(), 403, 'security_exception'],
    [tooManyRequests(3), 429, 'es_rejected_execution_exception'],
    [new AppError(507, 'storage_full', 'No space left for events.'), 507, 'cluster_block_exception'],
    [new Error('engine detail'), 500, 'exception'],
  ] as const)('renders %s in the ES shape', async (error, status, type) => {
    const app = Fastify();
    app.setErrorHandler(esErrorHandler);
    app.get('/x', async () => {
      throw error;
    });
    const res = await app.inject({ method: 'GET', url: '/x' });
    expect(res.statusCode).toBe(status);
    expect(res.json()).toMatchObject({ status, error: { type, root_cause: [{ type }] } });
    expect(res.json().error.reason).not.toContain('engine detail');
    if (status === 429) expect(res.headers['retry-after']).toBe('3');
    await app.close();
  });
});
