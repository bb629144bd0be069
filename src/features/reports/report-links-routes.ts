import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { IsoDateTime } from '../../core/resource-schema.js';
import { conflict, fieldError } from '../../errors/errors.js';
import { caller } from '../../http/plugins/auth.js';
import { errorResponses } from '../../http/schemas/common.js';
import type { ReportLinks } from './report-links.js';
import type { ReportsService } from './reports-service.js';

const tags = ['reports'];
const IdParam = Type.Object({ id: Type.Integer({ minimum: 1 }) });
const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const ReportLinkSchema = Type.Object(
  {
    id: Type.Integer(),
    report_id: Type.Integer(),
    expires_at: IsoDateTime(),
    created_at: IsoDateTime(),
    created_by: Nullable(Type.Integer({ description: 'Who asked for it; null: a scheduled delivery.' })),
    delivery_id: Nullable(Type.Integer({ description: 'The delivery it was made for, when sent.' })),
    revoked_at: Nullable(IsoDateTime()),
  },
  { title: 'ReportLink' },
);

/**
 * A report's links (docs/api/schedules.md, ADR 0034): minted on request or when a delivery is
 * sent, listed and revoked one by one by the report's owner and admins (others: 404, as the
 * report). A link's URL is shown once, to whoever made it.
 */
export async function reportLinkRoutes(
  fastify: FastifyInstance,
  opts: { reports: ReportsService; links: ReportLinks },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { reports, links } = opts;

  app.post(
    '/api/reports/:id/link',
    {
      schema: {
        tags,
        summary: "A signed link to a READY report's file that needs no token, valid expires_in seconds",
        params: IdParam,
        body: Type.Union([
          Type.Object(
            {
              expires_in: Type.Optional(
                Type.Integer({ minimum: 1, description: 'Seconds (default and most: reportLinkSeconds)' }),
              ),
            },
            { additionalProperties: false },
          ),
          Type.Null(),
        ]),
        response: {
          201: Type.Object({ id: Type.Integer(), url: Type.String(), expires_at: IsoDateTime() }),
          ...errorResponses(400, 401, 403, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const expiresIn = request.body?.expires_in;
      if (expiresIn !== undefined && expiresIn > links.maxSeconds)
        throw fieldError('expires_in', `At most ${links.maxSeconds} seconds (reportLinkSeconds).`);
      const who = caller(request);
      const report = await reports.get(who, request.params.id);
      if (report.status !== 'READY')
        throw conflict(
          report.status === 'PENDING' ? 'The report is still being generated.' : 'The report failed.',
        );
      return reply.status(201).send(await links.link(report.id, expiresIn, { userId: who.userId }));
    },
  );

  app.get(
    '/api/reports/:id/links',
    {
      schema: {
        tags,
        summary: "The report's links, newest first (without their URLs)",
        params: IdParam,
        response: {
          200: Type.Object({ count: Type.Integer(), results: Type.Array(ReportLinkSchema) }),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (request) => {
      const report = await reports.get(caller(request), request.params.id);
      const results = await links.list(report.id);
      return { count: results.length, results };
    },
  );

  app.delete(
    '/api/reports/:id/links/:link_id',
    {
      schema: {
        tags,
        summary: 'Revoke one link: it stops working at once',
        params: Type.Object({ id: Type.Integer({ minimum: 1 }), link_id: Type.Integer({ minimum: 1 }) }),
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const report = await reports.get(caller(request), request.params.id);
      await links.revoke(report.id, request.params.link_id);
      return reply.status(204).send(null);
    },
  );
}
