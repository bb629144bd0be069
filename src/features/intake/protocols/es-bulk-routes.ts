import { isUtf8 } from 'node:buffer';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { describeError } from '../../../errors/error-handler.js';
import { AppError } from '../../../errors/errors.js';
import { ingestBodies } from '../../../http/ingest-body.js';
import { caller } from '../../../http/plugins/auth.js';
import { PIECE_BYTES, PIECE_RECORDS, tooManyRecords } from '../../../ingest/parsers/chunked.js';
import {
  buildEsBulkResponse,
  buildEsErrorBody,
  type EsBulkItem,
  type EsBulkOutcome,
  type EsBulkPlan,
  EsBulkRequestError,
  esBulkCreated,
  esBulkFailed,
  esBulkItemEntry,
  planEsBulk,
} from '../../../ingest/parsers/es-bulk.js';
import type { ParsedEntry } from '../../../ingest/parsers/ndjson.js';
import { decodeUtf8Body, IngestBodyError } from '../../../ingest/parsers/ndjson.js';
import type { IntakeContext, IntakeProtocol } from './intake-protocol.js';

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
const ALL_METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

/**
 * An error with Elasticsearch's exception type, for the scope's error renderer. Other
 * errors (auth, body limits, media types, a full queue or disk) get a type from their
 * status (esErrorType).
 */
export class EsError extends AppError {
  override name = 'EsError';
  constructor(status: number, type: string, reason: string, headers?: Record<string, string>) {
    super(status, type, reason, undefined, headers);
  }
}

/** The ES exception type for an API error: what ES itself answers in that case. */
export function esErrorType(status: number, code: string): string {
  if (code.endsWith('_exception')) return code;
  switch (status) {
    case 400:
      return code === 'parse_error' || code === 'invalid_encoding'
        ? 'parse_exception'
        : 'illegal_argument_exception';
    case 401:
    case 403:
      return 'security_exception';
    case 404:
      return 'resource_not_found_exception';
    case 405:
      return 'illegal_argument_exception';
    case 409:
      return 'version_conflict_engine_exception';
    case 413:
      return 'content_too_long_exception';
    case 415:
      return 'media_type_header_exception';
    case 429:
      return 'es_rejected_execution_exception';
    case 503:
      return 'unavailable_shards_exception';
    case 507:
      return 'cluster_block_exception';
    default:
      return status >= 500 ? 'exception' : 'illegal_argument_exception';
  }
}

/**
 * Renders every error of the Elasticsearch scope in ES's shape
 * (`{"error": {"root_cause": [{type, reason}], type, reason}, "status"}`), with the status
 * and headers (`WWW-Authenticate`, `Retry-After`) the API-wide handler would use: shippers
 * and the official clients read `error.type`/`error.reason`, and rsyslog's omelasticsearch
 * cannot read our usual `{"detail"}` body at all.
 */
export function esErrorHandler(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) {
  const [status, body, headers] = describeError(error, request);
  const reason = body.request_id ? `${body.detail} (request id ${body.request_id})` : body.detail;
  return reply
    .status(status)
    .headers(headers)
    .type('application/json; charset=utf-8')
    .send(buildEsErrorBody(esErrorType(status, body.code), reason, status));
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `host:port` a client reached us at: the Host header, else the socket's local address. */
function publishAddress(request: FastifyRequest): string {
  const host = request.headers.host;
  if (host) return host;
  const { localAddress, localPort } = request.socket;
  if (!localAddress) return `127.0.0.1:${localPort ?? 9200}`;
  return localAddress.includes(':') ? `[${localAddress}]:${localPort}` : `${localAddress}:${localPort}`;
}

/**
 * Elasticsearch-compatible intake: `_bulk`, the single-document writes
 * (`_doc`, `_create`), and the read-only endpoints the Elasticsearch outputs of Filebeat,
 * Logstash, Fluent Bit and Vector probe before sending. Setup calls (index templates, ILM
 * policies, ingest pipelines, index and data stream creation) are acknowledged and
 * ignored: events keep our schema whatever mapping a shipper would install, and none of
 * them stores or promises to store a document. Any other path answers an ES-shaped 404
 * (405 for a known path with another method): nothing answers success without storing.
 */
export async function esBulkRoutes(app: FastifyInstance, opts: IntakeContext) {
  app.setErrorHandler(esErrorHandler);
  ingestBodies(
    app,
    /^application\/(vnd\.elasticsearch\+)?(x-)?(nd)?json\b/,
    `${PREFIX} takes application/json and application/x-ndjson (or application/vnd.elasticsearch+json)`,
  );
  app.addHook('onSend', async (_request, reply) => {
    // Official clients refuse servers that do not say they are Elasticsearch.
    reply.header('x-elastic-product', 'Elasticsearch');
  });
  const config = { auth: 'ingest' as const };
  let seqNo = 0;

  const bulk = async (index: string | undefined, body: Buffer | undefined, source: string) => {
    const started = performance.now();
    if (!body || body.length === 0) throw new EsError(400, 'parse_exception', 'request body is required');
    if (!isUtf8(body)) decodeUtf8Body(body); // throws, naming the first bad byte
    // One cheap pass first (action lines only: 400 for a malformed one, 413 past the cap,
    // nothing stored), then the documents are parsed and stored piece by piece.
    let plan: EsBulkPlan;
    try {
      plan = await planEsBulk(
        body,
        index ? { defaultIndex: index } : {},
        { maxRecords: opts.maxRecords, pieceRecords: PIECE_RECORDS, pieceBytes: PIECE_BYTES },
        () => tooManyRecords(opts.maxRecords),
      );
    } catch (err) {
      if (err instanceof EsBulkRequestError) throw new EsError(400, err.type, err.message);
      throw err;
    }
    const { items } = plan;
    const outcomes: EsBulkOutcome[] = [];
    const pieces = plan.pieces.map(([from, to]) => () => {
      plan.parsePiece(from, to);
      const entries: ParsedEntry[] = [];
      for (let k = from; k < to; k++) {
        const item = items[k]!;
        if (item.error === undefined) entries.push(esBulkItemEntry(item, k));
      }
      return entries;
    });
    // Outcomes per piece as soon as it is stored: its documents can then be dropped.
    let consumed = 0;
    await opts.ingest.ingestPieces(pieces, source, {
      afterPiece: (p, soFar) => {
        const [from, to] = plan.pieces[p]!;
        for (let k = from; k < to; k++) {
          const item = items[k]!;
          if (item.error !== undefined) outcomes.push(esBulkFailed(item));
          else {
            const result = soFar.items[consumed++];
            outcomes.push(
              result && 'ev_id' in result
                ? esBulkCreated(item, result.ev_id)
                : esBulkFailed(item, result?.error ?? 'document refused'),
            );
          }
        }
        plan.releasePiece(from, to);
      },
    });
    return buildEsBulkResponse(outcomes, performance.now() - started, index);
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
      handler: async (request) => {
        const index = (request.params as { index?: string }).index;
        return bulk(index, request.body as Buffer | undefined, opts.intakeOf(caller(request).username));
      },
    });
    methodNotAllowed(app, url, ['POST', 'PUT']);
  }

  /**
   * One document (`/{index}/_doc[/{id}]`, `/{index}/_create/{id}`): stored as one event,
   * answered like ES's index API. A client `_id` is kept as field `es_id` (as in `_bulk`);
   * the answer's `_id` is the event's ev_id. Events are append-only, so a second write
   * with the same `_id` is a new event, never an overwrite.
   */
  const single = async (request: FastifyRequest, reply: FastifyReply) => {
    const { index, id } = request.params as { index: string; id?: string };
    const body = request.body as Buffer | undefined;
    if (!body || body.length === 0) throw new EsError(400, 'parse_exception', 'request body is required');
    let doc: unknown;
    try {
      doc = JSON.parse(decodeUtf8Body(body));
    } catch (err) {
      if (err instanceof IngestBodyError) throw new EsError(400, 'parse_exception', err.message);
      const detail = err instanceof Error ? err.message : String(err);
      throw new EsError(400, 'mapper_parsing_exception', `failed to parse: ${detail}`);
    }
    if (!isObject(doc)) {
      throw new EsError(
        400,
        'mapper_parsing_exception',
        'failed to parse: the document must be a JSON object',
      );
    }
    checkIndexName(index);
    const create = request.routeOptions.url?.includes('/_create/') ?? false;
    const item: EsBulkItem = { action: create ? 'create' : 'index', line: 1, index, doc };
    if (id !== undefined && id !== '') item.id = id;
    const outcome = await opts.ingest.ingest(
      [esBulkItemEntry(item, 0)],
      opts.intakeOf(caller(request).username),
    );
    const result = outcome.items[0];
    if (!result || !('ev_id' in result)) {
      throw new EsError(400, 'mapper_parsing_exception', result?.error ?? 'document refused');
    }
    reply
      .status(201)
      .header('location', `${PREFIX}/${encodeURIComponent(index)}/_doc/${encodeURIComponent(result.ev_id)}`);
    return {
      _index: index,
      _id: result.ev_id,
      _version: 1,
      result: 'created',
      _shards: { total: 1, successful: 1, failed: 0 },
      _seq_no: seqNo++,
      _primary_term: 1,
    };
  };
  const docSchema = (summary: string) => ({ tags: ['ingest'], summary });
  app.post(
    `${PREFIX}/:index/_doc`,
    {
      bodyLimit: opts.bodyLimit,
      config,
      schema: docSchema('Elasticsearch-compatible: store one document (201, `_id` is the ev_id)'),
    },
    single,
  );
  methodNotAllowed(app, `${PREFIX}/:index/_doc`, ['POST']);
  for (const kind of ['_doc', '_create']) {
    const url = `${PREFIX}/:index/${kind}/:id`;
    app.route({
      method: ['PUT', 'POST'],
      url,
      bodyLimit: opts.bodyLimit,
      config,
      schema: docSchema(
        `Elasticsearch-compatible: store one document; the client id is kept as field es_id (201, \`_id\` is the ev_id)`,
      ),
      handler: single,
    });
    methodNotAllowed(app, url, ['PUT', 'POST']);
  }
  app.route({
    method: ['POST', 'PUT'],
    url: `${PREFIX}/:index/_update/:id`,
    config,
    schema: hidden,
    handler: async () => {
      throw new EsError(400, 'illegal_argument_exception', 'update is not supported: events are append-only');
    },
  });

  // Probes.
  app.route({
    method: ['GET', 'HEAD'],
    url: `${PREFIX}`,
    config,
    schema: hidden,
    handler: async () => ROOT_INFO,
  });
  methodNotAllowed(app, PREFIX, ['GET', 'HEAD']);
  app.get(`${PREFIX}/_license`, { config, schema: hidden }, async () => ({
    license: { status: 'active', uid: 'logscope', type: 'basic', issue_date_in_millis: 0, max_nodes: 1000 },
  }));
  app.get(`${PREFIX}/_xpack`, { config, schema: hidden }, async () => ({
    build: {},
    license: { status: 'active', type: 'basic', mode: 'basic' },
    features: {},
  }));
  for (const url of [`${PREFIX}/_cluster/health`, `${PREFIX}/_cluster/health/:index`]) {
    app.get(url, { config, schema: hidden }, async () => ({
      cluster_name: 'logscope',
      status: 'green',
      timed_out: false,
      number_of_nodes: 1,
      number_of_data_nodes: 1,
    }));
  }
  const nodes = async (request: FastifyRequest) => {
    const address = publishAddress(request);
    return {
      _nodes: { total: 1, successful: 1, failed: 0 },
      cluster_name: 'logscope',
      nodes: {
        logscope: {
          name: 'logscope',
          version: ES_VERSION,
          roles: ['data', 'ingest', 'master'],
          host: address.replace(/:\d+$/, '').replace(/^\[|\]$/g, ''),
          http: { publish_address: address, bound_address: [address] },
        },
      },
    };
  };
  for (const url of [`${PREFIX}/_nodes`, `${PREFIX}/_nodes/*`]) {
    app.get(url, { config, schema: hidden }, nodes);
  }

  // Setup calls: acknowledged, never storing events. GET/HEAD of the same objects say
  // they exist, so shippers do not try to install them on every start.
  const acknowledged = async () => ({ acknowledged: true });
  for (const url of [
    '_index_template/:name',
    '_template/:name',
    '_component_template/:name',
    '_ilm/policy/:name',
    '_ingest/pipeline/:name',
    '_data_stream/:name',
  ]) {
    app.route({
      method: ['PUT', 'POST'],
      url: `${PREFIX}/${url}`,
      config,
      schema: hidden,
      handler: acknowledged,
    });
    app.route({
      method: ['GET', 'HEAD'],
      url: `${PREFIX}/${url}`,
      config,
      schema: hidden,
      handler: async () => ({}),
    });
  }
  // Index creation and existence (HEAD /{index}); an index is only a name on events.
  app.put(`${PREFIX}/:index`, { config, schema: hidden }, async (request) => {
    const { index } = request.params as { index: string };
    checkIndexName(index);
    return { acknowledged: true, shards_acknowledged: true, index };
  });
  app.head(`${PREFIX}/:index`, { config, schema: hidden }, async (request, reply) => {
    checkIndexName((request.params as { index: string }).index);
    return reply.send();
  });

  // Everything else: ES's answer to a path it has no handler for, never a pretend success.
  app.route({
    method: ALL_METHODS,
    url: `${PREFIX}/*`,
    config,
    schema: hidden,
    handler: async (request) => {
      throw new EsError(
        404,
        'no_handler_found_exception',
        `no handler found for uri [${request.url.slice(PREFIX.length)}] and method [${request.method}]`,
      );
    },
  });
}

/**
 * Index names starting with `_` are ES API paths, never indices: a write there is a call
 * we do not implement, so it must not be taken for a document.
 */
function checkIndexName(index: string): void {
  if (/^[_\-+]/.test(index) || index === '') {
    throw new EsError(
      400,
      'invalid_index_name_exception',
      `Invalid index name [${index}], must not start with '_', '-', or '+'`,
    );
  }
}

/** ES's 405 for the other methods of a known path (`Allow` lists the right ones). */
function methodNotAllowed(app: FastifyInstance, url: string, allowed: HTTPMethods[]) {
  const others = ALL_METHODS.filter(
    (m) => !allowed.includes(m) && !(m === 'HEAD' && allowed.includes('GET')),
  );
  app.route({
    method: others,
    url,
    config: { auth: 'ingest' },
    schema: hidden,
    handler: async (request) => {
      throw new EsError(
        405,
        'illegal_argument_exception',
        `Incorrect HTTP method for uri [${request.url.slice(PREFIX.length)}] and method [${request.method}], allowed: [${allowed.join(', ')}]`,
        { allow: allowed.join(', ') },
      );
    },
  });
}

/** The Elasticsearch bulk API under `/api/ingest/es`; its events' intake is `es:<user>`. */
export const esBulkProtocol: IntakeProtocol = { name: 'es', routes: esBulkRoutes };
