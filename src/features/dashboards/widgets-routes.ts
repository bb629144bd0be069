import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { envelope, planList } from '../../http/list.js';
import { caller } from '../../http/plugins/auth.js';
import {
  ExportQuery,
  errorResponses,
  ListQuery,
  Paginated,
  parseBoolean,
  ShowAllQuery,
} from '../../http/schemas/common.js';
import { Id, WidgetBodySchema, WidgetPatchSchema } from './dashboard-schema.js';
import type { WidgetsService } from './widgets-service.js';

const ORDERABLE = ['id', 'title', 'owner', 'created_at', 'updated_at'] as const;
const IdParam = Type.Object({ id: Id() });
const tags = ['widgets'];
const WidgetOrExport = Type.Union([Type.Ref('Widget'), Type.Ref('WidgetExport')]);

export async function widgetRoutes(fastify: FastifyInstance, opts: { widgets: WidgetsService }) {
  const { widgets } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const one = { 200: Type.Ref('Widget'), ...errorResponses(400, 401, 403, 404, 413, 415) };

  app.get(
    '/api/widgets',
    {
      schema: {
        tags,
        summary: "List the caller's widgets (everyone's with show_all and manage_widgets)",
        querystring: Type.Object({
          ...ListQuery,
          ...ShowAllQuery,
          ...ExportQuery,
          title: Type.Optional(Type.String({ description: 'Exact title.' })),
        }),
        response: { 200: Paginated('Widget', WidgetOrExport), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const q = request.query;
      const plan = planList(q, ORDERABLE);
      const options = { showAll: parseBoolean(q.show_all) ?? false, title: q.title };
      const who = caller(request);
      const page = parseBoolean(q.export)
        ? await widgets.export(who, options, plan)
        : await widgets.list(who, options, plan);
      return envelope(request, plan, page);
    },
  );

  app.get(
    '/api/widgets/:id',
    {
      schema: {
        tags,
        summary: 'Read a widget (export=true: its portable form)',
        params: IdParam,
        querystring: Type.Object(ExportQuery),
        response: { 200: WidgetOrExport, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) =>
      parseBoolean(request.query.export)
        ? widgets.exportOne(caller(request), request.params.id)
        : widgets.get(caller(request), request.params.id),
  );

  app.put(
    '/api/widgets/:id',
    {
      schema: {
        tags,
        summary: 'Replace a widget you own (fields left out keep their values)',
        params: IdParam,
        body: WidgetBodySchema,
        response: one,
      },
    },
    async (request) => widgets.update(caller(request), request.params.id, request.body, false),
  );

  app.patch(
    '/api/widgets/:id',
    {
      schema: {
        tags,
        summary: 'Change some fields of a widget you own',
        params: IdParam,
        body: WidgetPatchSchema,
        response: one,
      },
    },
    async (request) => widgets.update(caller(request), request.params.id, request.body, true),
  );

  app.delete(
    '/api/widgets/:id',
    {
      schema: {
        tags,
        summary: 'Delete a widget you own (from every dashboard it is on)',
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await widgets.delete(caller(request), request.params.id);
      return reply.status(204).send(null);
    },
  );
}
