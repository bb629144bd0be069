import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { envelope, planList } from '../../http/list.js';
import { caller } from '../../http/plugins/auth.js';
import { errorResponses, ListQuery, Paginated } from '../../http/schemas/common.js';
import { BackupRequestSchema } from './backups-schema.js';
import type { BackupsService } from './backups-service.js';

const tags = ['backups'];
const IdParams = Type.Object({ id: Type.String({ pattern: '^[0-9A-Za-z]{1,64}$' }) });

/** Online backups (docs/api/backups.md): administrators only, audited. */
export async function backupsRoutes(fastify: FastifyInstance, opts: { backups: BackupsService }) {
  const { backups } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/api/admin/backups',
    {
      schema: {
        tags,
        summary: 'Take a backup of the embedded stores as of now, written in the background (admins)',
        body: BackupRequestSchema,
        response: { 202: Type.Ref('BackupJob'), ...errorResponses(400, 401, 403, 409, 413, 415, 503, 507) },
      },
    },
    async (request, reply) => {
      const job = await backups.start(caller(request), request.body as Record<string, unknown>);
      reply.code(202).header('location', `/api/admin/backups/${job.id}`);
      return job;
    },
  );
  app.get(
    '/api/admin/backups',
    {
      schema: {
        tags,
        summary: 'Backup jobs, newest first (admins)',
        querystring: Type.Object({ page: ListQuery.page, page_size: ListQuery.page_size }),
        response: { 200: Paginated('BackupJob', Type.Ref('BackupJob')), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const plan = planList(request.query, ['id'], '-id');
      return envelope(request, plan, await backups.list(caller(request), plan));
    },
  );
  app.get(
    '/api/admin/backups/:id',
    {
      schema: {
        tags,
        summary: 'A backup job: its status, progress and counts (admins)',
        params: IdParams,
        response: { 200: Type.Ref('BackupJob'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => backups.get(caller(request), request.params.id),
  );
  app.delete(
    '/api/admin/backups/:id',
    {
      schema: {
        tags,
        summary: 'Cancel a running backup: it ends CANCELLED and its folder is removed (admins)',
        params: IdParams,
        response: { 202: Type.Ref('BackupJob'), ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const job = await backups.cancel(caller(request), request.params.id);
      reply.code(202);
      return job;
    },
  );
}
