import { gzipSync } from 'node:zlib';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { envelope, planList, splitIntList } from '../../http/list.js';
import { caller } from '../../http/plugins/auth.js';
import {
  errorResponses,
  ListQuery,
  Paginated,
  parseBoolean,
  QueryBoolean,
  ShowAllQuery,
} from '../../http/schemas/common.js';
import type { LogMetricBackfills } from './log-metric-backfills.js';
import type { LogMetricExposition } from './log-metric-exposition.js';
import { KindSchema, LogMetricCreateSchema, LogMetricPatchSchema } from './log-metric-schema.js';
import type { LogMetricSeries } from './log-metric-series.js';
import type { LogMetricsService } from './log-metrics-service.js';

const ORDERABLE = ['id', 'name', 'created_at', 'updated_at'] as const;
const IdParam = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });
const tags = ['log metrics'];
const Time = Type.Union([Type.Number(), Type.String({ maxLength: 40 })], {
  description: 'Unix seconds or ISO 8601.',
});
const BackfillJob = Type.Object({
  id: Type.Integer(),
  kind: Type.Literal('backfill'),
  metric_id: Type.Integer(),
  from: Type.Number({ description: 'Unix seconds, rounded down to the metric’s buckets.' }),
  to: Type.Number({ description: 'Unix seconds, rounded up to the metric’s buckets.' }),
  status: Type.Union([Type.Literal('RUNNING'), Type.Literal('DONE'), Type.Literal('ERROR')]),
  progress: Type.Number({ description: '0..1 of the range not covered before.' }),
  events: Type.Integer({ description: 'Events counted so far.' }),
  started_at: Type.String(),
  finished_at: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
});

export async function logMetricRoutes(
  fastify: FastifyInstance,
  opts: {
    metrics: LogMetricsService;
    series: LogMetricSeries;
    exposition: LogMetricExposition;
    backfills: LogMetricBackfills;
  },
) {
  const { metrics, series, exposition, backfills } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const one = { 200: Type.Ref('LogMetric'), ...errorResponses(400, 401, 403, 404, 409, 413, 415) };

  app.get(
    '/api/log-metrics',
    {
      schema: {
        tags,
        summary: 'The log metrics you may see: yours and those shared with you (admins: all with show_all)',
        querystring: Type.Object({
          ...ListQuery,
          ...ShowAllQuery,
          name: Type.Optional(Type.String({ maxLength: 100, description: 'Name contains (ignoring case).' })),
          owner: Type.Optional(
            Type.String({ maxLength: 10_000, description: 'Owner user ids, comma-separated.' }),
          ),
          kind: Type.Optional(KindSchema),
          shared: Type.Optional(QueryBoolean('true: only those others shared with you; false: only yours.')),
        }),
        response: {
          200: Paginated('LogMetric', Type.Ref('LogMetric')),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const plan = planList(request.query, ORDERABLE, 'id');
      const q = request.query;
      return envelope(
        request,
        plan,
        await metrics.list(
          caller(request),
          {
            name: q.name,
            owners: splitIntList('owner', q.owner),
            kind: q.kind,
            shared: parseBoolean(q.shared),
            showAll: parseBoolean(q.show_all),
          },
          plan,
        ),
      );
    },
  );

  app.post(
    '/api/log-metrics',
    {
      schema: {
        tags,
        summary: 'Define a log metric (yours; share it with teams or everyone)',
        body: LogMetricCreateSchema,
        response: { 201: Type.Ref('LogMetric'), ...errorResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (request, reply) => reply.code(201).send(await metrics.create(caller(request), request.body)),
  );

  app.get(
    '/api/log-metrics/prometheus',
    {
      schema: {
        tags,
        summary:
          'The log metrics you see in Prometheus text format 0.0.4, over the streams you may read (for a scraper with your token)',
        querystring: Type.Object({
          name: Type.Optional(
            Type.String({ maxLength: 10_000, description: 'Only these metrics: names, comma-separated.' }),
          ),
        }),
        response: {
          200: {
            description: 'Prometheus text exposition format 0.0.4',
            content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } },
          },
          ...errorResponses(400, 401, 403),
        },
      },
      // Scrapes are counted, not audited (one every few seconds would drown the trail).
      onResponse: async (_request, reply) => exposition.counted(reply.statusCode),
    },
    async (request, reply) => {
      const names = request.query.name?.split(',').map((n) => n.trim());
      const who = caller(request);
      const { text } = await exposition.scrape(who, await metrics.seen(who, names));
      reply.header('content-type', 'text/plain; version=0.0.4; charset=utf-8');
      if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
        reply.header('content-encoding', 'gzip').header('vary', 'accept-encoding');
        // The schema describes the text; the bytes are that text compressed.
        return reply.send(gzipSync(text) as unknown as string);
      }
      return reply.send(text);
    },
  );

  app.post(
    '/api/log-metrics/:id/backfill',
    {
      schema: {
        tags,
        summary:
          'Count the events stored before the metric existed (or was reset) into its buckets, in the background (its owner, admins)',
        params: IdParam,
        body: Type.Object({ from: Type.Optional(Time), to: Type.Optional(Time) }),
        response: { 202: BackfillJob, ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await backfills.begin(caller(request), request.params.id, request.body)),
  );

  app.get(
    '/api/log-metrics/jobs/:job_id',
    {
      schema: {
        tags,
        summary: 'A backfill job: its progress and end (whoever may backfill its metric)',
        params: Type.Object({ job_id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) }),
        response: { 200: BackfillJob, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => backfills.get(caller(request), request.params.job_id),
  );

  app.get(
    '/api/log-metrics/:id',
    {
      schema: {
        tags,
        summary: 'Read a log metric you may see',
        params: IdParam,
        response: { 200: Type.Ref('LogMetric'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => metrics.get(caller(request), request.params.id),
  );

  app.patch(
    '/api/log-metrics/:id',
    {
      schema: {
        tags,
        summary: 'Change some fields (its owner, admins); a change of what it counts resets it',
        params: IdParam,
        body: LogMetricPatchSchema,
        response: one,
      },
    },
    async (request) => metrics.update(caller(request), request.params.id, request.body),
  );

  app.put(
    '/api/log-metrics/:id',
    {
      schema: {
        tags,
        summary: 'Replace it; what is left out returns to its default (its owner, admins)',
        params: IdParam,
        body: LogMetricCreateSchema,
        response: one,
      },
    },
    async (request) => metrics.update(caller(request), request.params.id, request.body, true),
  );

  app.delete(
    '/api/log-metrics/:id',
    {
      schema: {
        tags,
        summary: 'Delete it and its buckets (its owner, admins)',
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await metrics.delete(caller(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/log-metrics/:id/series',
    {
      schema: {
        tags,
        summary:
          "A log metric's series: its buckets summed by step and label tuple, over the streams you may read",
        params: IdParam,
        querystring: Type.Object(
          {
            from: Type.Optional(
              Type.String({
                maxLength: 40,
                description: 'Unix seconds or ISO 8601 (default: an hour before `to`).',
              }),
            ),
            to: Type.Optional(
              Type.String({ maxLength: 40, description: 'Unix seconds or ISO 8601 (default: now).' }),
            ),
            step: Type.Optional(
              Type.String({ maxLength: 20, description: 'Seconds (300) or a duration (5m, 1h, 1d).' }),
            ),
            labels: Type.Optional(
              Type.String({ maxLength: 2_000, description: 'The labels to keep, comma-separated.' }),
            ),
            streams: Type.Optional(
              Type.String({ maxLength: 10_000, description: 'Stream ids, comma-separated.' }),
            ),
            limit: Type.Optional(
              Type.Integer({ minimum: 1, maximum: 10_000, description: 'Most series (default 100).' }),
            ),
          },
          {
            patternProperties: { '^label\\.': Type.String({ maxLength: 10_000 }) },
            description: '`label.<field>=a,b`: only tuples whose label is one of these values.',
          },
        ),
        response: { 200: Type.Unknown(), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request) => {
      const metric = await metrics.get(caller(request), request.params.id);
      const q = request.query as Record<string, string | undefined> & { limit?: number };
      const labelFilter = new Map(
        Object.entries(q)
          .filter(([k, v]) => k.startsWith('label.') && typeof v === 'string')
          .map(([k, v]) => [k.slice('label.'.length), (v as string).split(',')] as const),
      );
      return series.series(caller(request), metric, {
        from: q.from,
        to: q.to,
        step: q.step,
        labels: q.labels,
        streams: q.streams,
        limit: q.limit,
        labelFilter,
      });
    },
  );
}
