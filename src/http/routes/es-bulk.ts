import type { FastifyInstance, FastifyReply } from 'fastify';
import type { IngestService } from '../../ingest/ingest-service.js';
import {
  buildEsBulkResponse,
  buildEsErrorBody,
  EsBulkRequestError,
  esBulkCreated,
  esBulkFailed,
  esBulkItemToRecord,
  parseEsBulk,
} from '../../ingest/parsers/es-bulk.js';
import type { ParsedEntry } from '../../ingest/parsers/ndjson.js';
import { decodeUtf8Body, IngestBodyError } from '../../ingest/parsers/ndjson.js';
import { ingestBodies } from '../ingest-body.js';
import { caller } from '../plugins/auth.js';
import { sourceOf } from './ingest.js';

/** The Elasticsearch version we answer as: new enough for current shippers' checks. */
const ES_VERSION = '8.17.0';
const PREFIX = '/api/ingest/es';

const ROOT_INFO = {
  name: 'logscope',
  cluster_name: 'logscope',
  cluster_uuid: 'logscope-0000000000000000',
  version: {
    number: ES_VERSION,
    build_flavor: 'default',
    build_type: 'tar',
    lucene_version: '9.12.0',
    minimum_wire_compatibility_version: '7.17.0',
    minimum_index_compatibility_version: '7.0.0',
  },
  tagline: 'You Know, for Search',
};

const hidden = { hide: true };

/**
 * Elasticsearch-compatible intake: `_bulk` plus the read-only endpoints the Elasticsearch
 * outputs of Filebeat, Logstash, Fluent Bit and Vector probe before sending. Setup calls
 * (templates, ILM policies, pipelines) are acknowledged and ignored: events keep our
 * schema whatever mapping a shipper would install.
 */
export async function esBulkRoutes(app: FastifyInstance, opts: { ingest: IngestService; bodyLimit: number }) {
  ingestBodies(app, /^application\/(vnd\.elasticsearch\+)?(x-)?(nd)?json\b/);
  app.addHook('onSend', async (_request, reply) => {
    // Official clients refuse servers that do not say they are Elasticsearch.
    reply.header('x-elastic-product', 'Elasticsearch');
  });
  const config = { auth: 'ingest' as const };

  const bulk = async (
    index: string | undefined,
    body: Buffer | undefined,
    reply: FastifyReply,
    source: string,
  ) => {
    const started = performance.now();
    if (!body || body.length === 0) {
      return reply.status(400).send(buildEsErrorBody('parse_exception', 'request body is required'));
    }
    let items: ReturnType<typeof parseEsBulk>;
    try {
      items = parseEsBulk(decodeUtf8Body(body), index ? { defaultIndex: index } : {});
    } catch (err) {
      if (err instanceof EsBulkRequestError)
        return reply.status(400).send(buildEsErrorBody(err.type, err.message));
      if (err instanceof IngestBodyError)
        return reply.status(400).send(buildEsErrorBody('parse_exception', err.message));
      throw err;
    }
    const entries: ParsedEntry[] = [];
    const positions: number[] = [];
    items.forEach((item, i) => {
      if (item.error !== undefined) return;
      positions.push(i);
      entries.push({ index: entries.length, value: esBulkItemToRecord(item) });
    });
    const outcome = await opts.ingest.ingest(entries, source);
    const outcomes = items.map((item) => (item.error !== undefined ? esBulkFailed(item) : null));
    positions.forEach((pos, k) => {
      const item = items[pos];
      const result = outcome.items[k];
      if (!item || !result) return;
      outcomes[pos] =
        'ev_id' in result ? esBulkCreated(item, result.ev_id) : esBulkFailed(item, result.error);
    });
    return buildEsBulkResponse(
      outcomes.map((o) => o ?? { action: 'index' as const, status: 500 }),
      performance.now() - started,
      index,
    );
  };

  for (const url of [`${PREFIX}/_bulk`, `${PREFIX}/:index/_bulk`]) {
    app.route({
      method: ['POST', 'PUT'],
      url,
      bodyLimit: opts.bodyLimit,
      config,
      schema: {
        tags: ['ingest'],
        summary:
          'Elasticsearch-compatible bulk intake (index/create actions; update/delete refused per item)',
      },
      handler: async (request, reply) => {
        const index = (request.params as { index?: string }).index;
        return bulk(index, request.body as Buffer | undefined, reply, sourceOf(caller(request), 'es'));
      },
    });
  }

  app.route({
    method: ['GET', 'HEAD'],
    url: `${PREFIX}`,
    config,
    schema: hidden,
    handler: async () => ROOT_INFO,
  });
  app.get(`${PREFIX}/_license`, { config, schema: hidden }, async () => ({
    license: { status: 'active', uid: 'logscope', type: 'basic', issue_date_in_millis: 0, max_nodes: 1000 },
  }));
  app.get(`${PREFIX}/_xpack`, { config, schema: hidden }, async () => ({
    build: {},
    license: { status: 'active', type: 'basic', mode: 'basic' },
    features: {},
  }));
  app.get(`${PREFIX}/_cluster/health`, { config, schema: hidden }, async () => ({
    cluster_name: 'logscope',
    status: 'green',
    number_of_nodes: 1,
    number_of_data_nodes: 1,
  }));
  app.get(`${PREFIX}/_nodes*`, { config, schema: hidden }, async () => ({
    _nodes: { total: 1, successful: 1, failed: 0 },
    cluster_name: 'logscope',
    nodes: {
      logscope: {
        name: 'logscope',
        version: ES_VERSION,
        roles: ['data', 'ingest', 'master'],
        http: { publish_address: '127.0.0.1:8080' },
      },
    },
  }));
  // Templates, ILM policies, ingest pipelines, data streams, index creation: acknowledged.
  app.route({
    method: ['PUT', 'POST'],
    url: `${PREFIX}/*`,
    config,
    schema: hidden,
    handler: async () => ({ acknowledged: true }),
  });
  app.route({
    method: ['GET', 'HEAD'],
    url: `${PREFIX}/*`,
    config,
    schema: hidden,
    handler: async () => ({}),
  });
}
