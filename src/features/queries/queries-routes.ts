import { PassThrough } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { eventsRendererFor } from '../../export/events-renderer.js';
import { ALIASES, EXPORT_FORMATS, parseExportFormat } from '../../export/export-format.js';
import { caller } from '../../http/plugins/auth.js';
import { httpOrigin } from '../../http/read-origin.js';
import { errorResponses, parseBoolean, QueryBoolean } from '../../http/schemas/common.js';
import type { PresentOptions } from '../../query/types/query-type.js';
import type { QueriesService } from './queries-service.js';

const tags = ['queries'];
const QidParam = Type.Object({ qid: Type.String({ minLength: 1, maxLength: 64 }) });

export const GenericQuerySchema = Type.Object(
  {
    query_id: Type.String(),
    status: Type.Union(['PENDING', 'IN_PROGRESS', 'SUCCESS', 'STOPPED', 'ERROR'].map((s) => Type.Literal(s))),
    type: Type.String(),
    base_time: Type.Integer({ description: 'Unix seconds the time range was evaluated at' }),
    results: Type.Object({}, { additionalProperties: true }),
    params: Type.Object({}, { additionalProperties: true }),
    owner_id: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()]),
    progress: Type.Number({ minimum: 0, maximum: 1 }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    answered_from: Type.Union(
      ['events', 'rollups', 'both'].map((p) => Type.Literal(p)),
      {
        description:
          'What answered: the events, counts kept at ingest (a log metric’s buckets), or both (docs/api/queries.md).',
      },
    ),
    cold: Type.Union(
      [
        Type.Object({
          files: Type.Integer({ description: 'Cold files whose time range meets the query’s.' }),
          files_skipped: Type.Integer({ description: 'Of those, skipped by their summaries.' }),
          files_read: Type.Integer({ description: 'Of those, opened.' }),
          bytes_read: Type.Integer({ description: 'The sizes of the files opened.' }),
        }),
        Type.Null(),
      ],
      { description: 'The cold tier’s files the query reads; null when its range meets none.' },
    ),
    index: Type.Union(
      [
        Type.Object({
          path: Type.Union(
            ['index', 'narrowed', 'scan'].map((p) => Type.Literal(p)),
            {
              description:
                'index: the word index alone answered (nothing read); narrowed: only the candidate blocks’ time ranges were read; scan: every event of the range was read.',
            },
          ),
          why: Type.Union(
            [
              ...['no_indexed_term', 'too_many_candidates', 'index_off'].map((w) => Type.Literal(w)),
              Type.Null(),
            ],
            {
              description:
                'Why a scan: the filter requires no word or field value the index keeps, its candidates would cost more than the scan, or the index is off; null otherwise.',
            },
          ),
          blocks: Type.Integer({ description: 'The index’s blocks the range meets.' }),
          candidate_blocks: Type.Integer({ description: 'Of those, the blocks that may hold a match.' }),
          ranges: Type.Integer({ description: 'The time ranges read (joined candidates); 0 on a scan.' }),
        }),
        Type.Null(),
      ],
      {
        description:
          'How the query met the hot tier’s word index (ADR 0004): why a search was fast or slow. Null on an event store without one (ClickHouse), and for a user who may read only some streams (a block holds events of every stream).',
      },
    ),
  },
  { $id: 'GenericQuery' },
);

const ShapeFlags = {
  actions_hint: Type.Optional(QueryBoolean('Search: add the actions that apply to each field.')),
  add_trigger_data: Type.Optional(QueryBoolean('Search: add the triggers each event matched.')),
  add_geoip_data: Type.Optional(QueryBoolean('TopN, LastN: add GeoIP data to IP values.')),
};

const shape = (q: {
  actions_hint?: string;
  add_trigger_data?: string;
  add_geoip_data?: string;
}): PresentOptions => ({
  ...(q.actions_hint !== undefined ? { actionsHint: parseBoolean(q.actions_hint) } : {}),
  ...(q.add_trigger_data !== undefined ? { addTriggerData: parseBoolean(q.add_trigger_data) } : {}),
  ...(q.add_geoip_data !== undefined ? { addGeoipData: parseBoolean(q.add_geoip_data) } : {}),
});

export async function queryRoutes(fastify: FastifyInstance, opts: { queries: QueriesService }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { queries } = opts;
  const one = { 200: Type.Ref('GenericQuery'), ...errorResponses(400, 401, 403, 404) };

  app.post(
    '/api/query',
    {
      schema: {
        tags,
        summary: 'Create and run a query: 200 when it finished within the sync window, else 202',
        querystring: Type.Object({
          validate_only: Type.Optional(QueryBoolean('Only validate; nothing is stored or computed.')),
          ...ShapeFlags,
        }),
        body: Type.Object(
          {
            type: Type.String({
              description: 'Search, TopN, LastN, Summary or Timeline (GET /api/query/types)',
            }),
            params: Type.Object({}, { additionalProperties: true, default: {} }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Union([
            Type.Ref('GenericQuery'),
            Type.Object({
              valid: Type.Boolean(),
              type: Type.String(),
              params: Type.Object({}, { additionalProperties: true }),
            }),
          ]),
          202: Type.Ref('GenericQuery'),
          ...errorResponses(400, 401, 403, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const who = caller(request);
      const valid = queries.validate(request.body);
      if (parseBoolean(request.query.validate_only))
        return { valid: true, type: valid.type, params: valid.params };
      const { finished, query } = await queries.create(who, valid, shape(request.query), httpOrigin(request));
      return reply.status(finished ? 200 : 202).send(query);
    },
  );

  app.get(
    '/api/query/types',
    {
      schema: {
        tags,
        summary: 'The query types, with the JSON Schema of their params and results',
        response: {
          200: Type.Array(
            Type.Object({
              type: Type.String(),
              description: Type.String(),
              params: Type.Object({}, { additionalProperties: true }),
              results: Type.Object({}, { additionalProperties: true }),
            }),
          ),
          ...errorResponses(401, 403),
        },
      },
    },
    async () => queries.types(),
  );

  app.get(
    '/api/query/:qid',
    {
      schema: {
        tags,
        summary: 'A query now (never waits); re-pages a Search without recomputing its total',
        params: QidParam,
        querystring: Type.Object({
          page: Type.Optional(Type.Integer({ minimum: 1 })),
          page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
          offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Wins over page.' })),
          ...ShapeFlags,
        }),
        response: one,
      },
    },
    async (request) => {
      const q = request.query;
      return queries.get(caller(request), request.params.qid, {
        ...shape(q),
        ...(q.page !== undefined ? { page: q.page } : {}),
        ...(q.page_size !== undefined ? { pageSize: q.page_size } : {}),
        ...(q.offset !== undefined ? { offset: q.offset } : {}),
      });
    },
  );

  app.get(
    '/api/query/:qid/recalculate',
    { schema: { tags, summary: 'Run the query again now', params: QidParam, response: one } },
    async (request) => queries.recalculate(caller(request), request.params.qid),
  );

  app.route({
    method: ['GET', 'POST'],
    url: '/api/query/:qid/stop',
    schema: {
      tags,
      summary: 'Interrupt the computation and stop re-evaluation (status STOPPED, partial results kept)',
      params: QidParam,
      response: one,
    },
    handler: async (request) => queries.stop(caller(request), (request.params as { qid: string }).qid),
  });

  app.get(
    '/api/query/:qid/export',
    {
      // Format names are case-insensitive: the enum below sees them lower-cased.
      preValidation: async (request) => {
        const q = request.query as { ftype?: unknown };
        if (typeof q.ftype === 'string') q.ftype = q.ftype.trim().toLowerCase();
      },
      schema: {
        tags,
        summary: 'Download the query as a file (a Search: every matching event, streamed)',
        description:
          'A Search exported as `json` is the JSON array of its events and as `ndjson` one event ' +
          'a line, each as in the Search results (so the file can be sent back to POST /api/ingest); ' +
          'the other types export their result table (`json`: a document of sections, `ndjson`: one row a line).',
        params: QidParam,
        querystring: Type.Object({
          ftype: Type.Optional(
            Type.String({
              enum: [...EXPORT_FORMATS, ...Object.keys(ALIASES)],
              description: 'csv, xlsx (or xslx), docx, pdf, json (default) or ndjson; any case',
            }),
          ),
          timezone: Type.Optional(
            Type.String({ description: 'IANA timezone for times in the file (default UTC)' }),
          ),
          filename: Type.Optional(
            Type.String({ maxLength: 200, description: 'File name (the extension is added)' }),
          ),
        }),
        response: { ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const who = caller(request);
      const exported = await queries.export(who, request.params.qid, request.query);
      const { filename, doc } = exported;
      // A Search as json/ndjson: its events, as the API presents them, not a table.
      const events = eventsRendererFor(parseExportFormat(request.query.ftype ?? 'json') ?? '');
      const renderer =
        events && (await queries.job(who, request.params.qid)).type === 'Search' ? events : exported.renderer;
      const body = new PassThrough();
      reply
        .header('content-type', renderer.mediaType)
        .header('content-disposition', `attachment; filename="${filename}"`);
      // Errors after the headers are out can only cut the stream: the renderer destroys it.
      renderer
        .render(doc, body)
        .catch((err: Error) => request.log.warn({ err: err.message }, 'export failed'));
      return reply.send(body);
    },
  );

  app.get(
    '/api/query/:qid/remove',
    {
      schema: {
        tags,
        summary: 'Delete the query; returns its last representation',
        params: QidParam,
        response: one,
      },
    },
    async (request) => queries.remove(caller(request), request.params.qid),
  );
}
