import { Readable } from 'node:stream';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { stringify } from 'csv-stringify/sync';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { IsoDateTime, OneOf } from '../../core/resource-schema.js';
import { inertCell } from '../../export/csv-renderer.js';
import { envelope, planList } from '../../http/list.js';
import { caller } from '../../http/plugins/auth.js';
import { errorResponses, ListQuery, Paginated } from '../../http/schemas/common.js';
import type { AuditFilter } from './audit-repository.js';
import type { AuditRecord } from './audit-schema.js';
import type { AuditTrail } from './audit-trail.js';

const Filters = {
  actor: Type.Optional(Type.String({ maxLength: 200, description: 'A user id or a username.' })),
  action: Type.Optional(
    Type.String({
      maxLength: 100,
      description: 'An action (query.create), or a family ending in a dot (auth.).',
    }),
  ),
  from: Type.Optional(IsoDateTime('Records at or after this time.')),
  to: Type.Optional(IsoDateTime('Records before this time.')),
};

const filterOf = (q: { actor?: string; action?: string; from?: string; to?: string }): AuditFilter => ({
  actor: q.actor,
  action: q.action,
  from: q.from === undefined ? undefined : new Date(q.from).toISOString(),
  to: q.to === undefined ? undefined : new Date(q.to).toISOString(),
});

const CSV_COLUMNS = [
  'id',
  'at',
  'user_id',
  'username',
  'token_key_id',
  'address',
  'action',
  'target_kind',
  'target_id',
  'outcome',
  'detail',
] as const;

const csvLine = (r: AuditRecord) =>
  stringify([
    [
      r.id,
      r.at,
      r.actor.user_id ?? '',
      r.actor.username ?? '',
      r.actor.token_key_id ?? '',
      r.actor.address ?? '',
      r.action,
      r.target?.kind ?? '',
      r.target?.id ?? '',
      r.outcome,
      JSON.stringify(r.detail),
    ].map((v) => inertCell(String(v))),
  ]);

export async function auditRoutes(fastify: FastifyInstance, opts: { trail: AuditTrail }) {
  const { trail } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['audit'];

  app.get(
    '/api/audit',
    {
      schema: {
        tags,
        summary: 'The audit trail, newest first (admins)',
        querystring: Type.Object({ ...ListQuery, ...Filters }),
        response: {
          200: Paginated('AuditRecord', Type.Ref('AuditRecord')),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const plan = planList({ ...request.query, ordering: undefined }, ['id'], '-id');
      return envelope(request, plan, await trail.list(caller(request), filterOf(request.query), plan));
    },
  );

  app.get(
    '/api/audit/export',
    {
      schema: {
        tags,
        summary: 'The audit trail as a file, newest first (admins): ndjson (default) or csv',
        querystring: Type.Object({ ...Filters, ftype: Type.Optional(OneOf(['ndjson', 'csv'] as const)) }),
        response: { ...errorResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const who = caller(request);
      const csv = request.query.ftype === 'csv';
      const records = trail.export(who, filterOf(request.query));
      // The first record is read before answering, so a refusal (403) is an answer, not a cut stream.
      const first = await records.next();
      async function* lines() {
        if (csv) yield `${stringify([[...CSV_COLUMNS]])}`;
        if (!first.done) yield csv ? csvLine(first.value) : `${JSON.stringify(first.value)}\n`;
        for await (const r of records) yield csv ? csvLine(r) : `${JSON.stringify(r)}\n`;
      }
      const ext = csv ? 'csv' : 'ndjson';
      return reply
        .type(csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson')
        .header('content-disposition', `attachment; filename="audit.${ext}"`)
        .send(Readable.from(lines()));
    },
  );
}
