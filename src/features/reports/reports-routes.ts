import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { IsoDateTime } from '../../core/resource-schema.js';
import { envelope, planList } from '../../http/list.js';
import { caller } from '../../http/plugins/auth.js';
import { errorResponses, ListQuery, Paginated } from '../../http/schemas/common.js';
import type { ReportLinks } from './report-links.js';
import type { ReportsService } from './reports-service.js';

const tags = ['reports'];
const IdParam = Type.Object({ id: Type.Integer({ minimum: 1 }) });
const ORDERABLE = ['id', 'title', 'created_at', 'status', 'ftype', 'size'] as const;

const SourceSchema = Type.Union([
  Type.Object(
    {
      kind: Type.Literal('query'),
      query: Type.Object(
        { type: Type.String(), params: Type.Optional(Type.Object({}, { additionalProperties: true })) },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    { kind: Type.Literal('dashboard'), dashboard_id: Type.Integer({ minimum: 1 }) },
    { additionalProperties: false },
  ),
]);

export const ShortReportSchema = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    ftype: Type.String(),
    status: Type.Union([Type.Literal('PENDING'), Type.Literal('READY'), Type.Literal('ERROR')]),
    size: Type.Integer(),
    filename: Type.String(),
    source: Type.Object({}, { additionalProperties: true }),
    timezone: Type.String(),
    owner: Type.Integer(),
    created_at: IsoDateTime(),
    error: Type.Union([Type.String(), Type.Null()]),
    schedule_id: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The schedule whose run made it; null: made on request.',
    }),
  },
  { $id: 'ShortReport' },
);

export async function reportRoutes(
  fastify: FastifyInstance,
  opts: { reports: ReportsService; links: ReportLinks },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { reports, links } = opts;

  app.get(
    '/api/reports',
    {
      schema: {
        tags,
        summary: 'Generated reports (yours; admins see all)',
        querystring: Type.Object({
          ...ListQuery,
          schedule_id: Type.Optional(
            Type.Integer({ minimum: 1, description: 'Only the reports this schedule made.' }),
          ),
        }),
        response: {
          200: Paginated('ShortReport', Type.Ref('ShortReport')),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const plan = planList(request.query, ORDERABLE);
      const { schedule_id } = request.query;
      return envelope(request, plan, await reports.list(caller(request), plan, schedule_id));
    },
  );

  app.post(
    '/api/reports',
    {
      schema: {
        tags,
        summary: 'Generate a report of a query or a dashboard in the background (202)',
        body: Type.Object(
          {
            title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            ftype: Type.String({ description: 'csv, xlsx, docx, pdf, json or ndjson' }),
            source: SourceSchema,
            timezone: Type.Optional(Type.String({ description: 'IANA timezone for times (default UTC)' })),
          },
          { additionalProperties: false },
        ),
        response: { 202: Type.Ref('ShortReport'), ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request, reply) => reply.status(202).send(await reports.create(caller(request), request.body)),
  );

  app.get(
    '/api/reports/:id',
    {
      schema: {
        tags,
        summary: 'One report',
        params: IdParam,
        response: { 200: Type.Ref('ShortReport'), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => reports.get(caller(request), request.params.id),
  );

  app.get(
    '/api/reports/:id/file',
    {
      config: { signedLink: 'sig' },
      schema: {
        tags,
        summary:
          'Download the report file (409 until it is READY); with `exp` and `sig`, a signed link needing no token',
        params: IdParam,
        querystring: Type.Object({
          saveas: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          exp: Type.Optional(
            Type.String({ maxLength: 20, description: 'A signed link: its expiry (Unix s).' }),
          ),
          sig: Type.Optional(
            Type.String({ maxLength: 100, description: 'A signed link: its signature (report links).' }),
          ),
        }),
        response: errorResponses(401, 403, 404, 409),
      },
    },
    async (request, reply) => {
      const { sig, exp } = request.query;
      // A link is judged before its report is looked up (a forged one learns nothing).
      if (sig !== undefined) await links.check(request.params.id, exp, sig);
      const { stream, report, mediaType } =
        sig !== undefined
          ? await reports.fileByLink(request.params.id)
          : await reports.file(caller(request), request.params.id);
      const wanted = request.query.saveas?.replace(/[^\w.\- ]+/g, '_');
      const ext = report.filename.slice(report.filename.lastIndexOf('.'));
      const name = wanted
        ? wanted.toLowerCase().endsWith(ext)
          ? wanted
          : `${wanted}${ext}`
        : report.filename;
      return reply
        .header('content-type', mediaType)
        .header('content-length', report.size)
        .header('content-disposition', `attachment; filename="${name}"`)
        .send(stream);
    },
  );

  app.delete(
    '/api/reports/:id',
    {
      schema: {
        tags,
        summary: 'Delete a report and its file',
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await reports.delete(caller(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
