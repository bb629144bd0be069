import { Client } from '@elastic/elasticsearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../helpers/app.js';
import { storedEvents } from '../helpers/events.js';

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
    const rows = await storedEvents(t, "starts_with(message, 'bulk helper doc')");
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
    expect(await storedEvents(t, "message IN ('es good 1', 'es good 2')")).toHaveLength(2);
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
});
