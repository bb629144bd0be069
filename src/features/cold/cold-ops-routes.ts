import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { caller } from '../../http/plugins/auth.js';
import { errorResponses } from '../../http/schemas/common.js';
import type { ColdJobs } from './cold-jobs.js';
import { ColdImportRequestSchema, ColdVerifyRequestSchema } from './cold-ops-schema.js';

const tags = ['cold'];
const jobLocation = (id: string) => `/api/cold/jobs/${id}`;

/** `cold verify` and `cold import` (docs/api/cold.md): administrators only, audited. */
export async function coldOpsRoutes(fastify: FastifyInstance, opts: { jobs: ColdJobs }) {
  const { jobs } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/api/cold/verify',
    {
      schema: {
        tags,
        summary:
          'Check every cold file against its record and every Parquet file against the records; changes nothing (admins)',
        body: ColdVerifyRequestSchema,
        response: {
          200: Type.Ref('ColdVerifyJob'),
          202: Type.Ref('ColdVerifyJob'),
          ...errorResponses(400, 401, 403, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const { done, job } = await jobs.verify(caller(request), request.body);
      if (!done) reply.code(202).header('location', jobLocation(job.id));
      return job;
    },
  );
  app.post(
    '/api/cold/import',
    {
      schema: {
        tags,
        summary: 'Record Parquet files placed inside coldDir (a day folder copied back) (admins)',
        body: ColdImportRequestSchema,
        response: {
          200: Type.Ref('ColdImportJob'),
          202: Type.Ref('ColdImportJob'),
          ...errorResponses(400, 401, 403, 404, 413, 415),
        },
      },
    },
    async (request, reply) => {
      const { done, job } = await jobs.import(caller(request), request.body);
      if (!done) reply.code(202).header('location', jobLocation(job.id));
      return job;
    },
  );
  app.get(
    '/api/cold/jobs/:id',
    {
      schema: {
        tags,
        summary: 'A cold tier job (verify or import): its status and answer (admins)',
        params: Type.Object({ id: Type.String({ pattern: '^[0-9A-Za-z]{1,64}$' }) }),
        response: {
          200: Type.Union([Type.Ref('ColdVerifyJob'), Type.Ref('ColdImportJob')]),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => jobs.get(caller(request), request.params.id),
  );
}
