import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { fieldError } from '../../errors/errors.js';
import { envelope, planList, splitIntList } from '../../http/list.js';
import { caller } from '../../http/plugins/auth.js';
import {
  ExportQuery,
  errorResponses,
  ListQuery,
  Paginated,
  parseBoolean,
  QueryBoolean,
  ShowAllQuery,
} from '../../http/schemas/common.js';
import {
  DashboardCreateSchema,
  DashboardPatchSchema,
  DashboardPutSchema,
  Id,
  MAX_ID,
  TemplateInfoSchema,
  TemplatePathSchema,
  WidgetBodySchema,
} from './dashboard-schema.js';
import type { DashboardsService } from './dashboards-service.js';

const MAX_LISTED_IDS = 1000;

/** A comma-separated id list (`owner=1,2`): distinct ids within the stores' integer range. */
const idList = (name: string, raw: string | undefined) => {
  const ids = splitIntList(name, raw);
  if (!ids) return undefined;
  const big = ids.find((id) => id > MAX_ID);
  if (big !== undefined) throw fieldError(name, `"${big}" is not a valid id.`);
  const unique = [...new Set(ids)];
  if (unique.length > MAX_LISTED_IDS) throw fieldError(name, `At most ${MAX_LISTED_IDS} ids.`);
  return unique;
};

const ORDERABLE = ['id', 'title', 'owner', 'created_at', 'updated_at'] as const;
const TEMPLATE_ORDERABLE = ['path', 'title'] as const;
const IdParam = Type.Object({ id: Id() });
const WidgetParam = Type.Object({ id: Id(), widget_id: Id() });
const tags = ['dashboards'];
const DashboardOrExport = Type.Union([Type.Ref('Dashboard'), Type.Ref('DashboardExport')]);

export async function dashboardRoutes(fastify: FastifyInstance, opts: { dashboards: DashboardsService }) {
  const { dashboards } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const one = { 200: Type.Ref('Dashboard'), ...errorResponses(400, 401, 403, 404, 413, 415) };
  const deleted = { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) };

  app.get(
    '/api/dashboards',
    {
      schema: {
        tags,
        summary: "List the caller's dashboards (everyone's with show_all and manage_dashboards)",
        querystring: Type.Object({
          ...ListQuery,
          ...ShowAllQuery,
          ...ExportQuery,
          title: Type.Optional(Type.String({ description: 'Exact title.' })),
          title__iregex: Type.Optional(
            Type.String({
              maxLength: 1000,
              description: 'Case-insensitive RE2 regular expression searched in the title.',
            }),
          ),
          owner: Type.Optional(Type.String({ description: 'Owner ids, comma-separated (any of them).' })),
        }),
        response: {
          200: Paginated('Dashboard', DashboardOrExport),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const q = request.query;
      const plan = planList(q, ORDERABLE);
      const options = {
        showAll: parseBoolean(q.show_all) ?? false,
        title: q.title,
        titleIregex: q.title__iregex,
        owners: idList('owner', q.owner),
      };
      const who = caller(request);
      const page = parseBoolean(q.export)
        ? await dashboards.export(who, options, plan)
        : await dashboards.list(who, options, plan);
      return envelope(request, plan, page);
    },
  );

  app.post(
    '/api/dashboards',
    {
      schema: {
        tags,
        summary: 'Create a dashboard from the body or a template, or clone one (source_id)',
        querystring: Type.Object({
          source_id: Type.Optional(Id('Id of a dashboard to clone.')),
          clone_widgets: Type.Optional(
            QueryBoolean(
              'When cloning, copy the widgets (owned by you) instead of attaching them read-only.',
            ),
          ),
        }),
        body: DashboardCreateSchema,
        response: { 201: Type.Ref('Dashboard'), ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
      // A clone needs no body: no body at all reads as `{}`.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const created = await dashboards.create(caller(request), request.body, {
        sourceId: request.query.source_id,
        cloneWidgets: parseBoolean(request.query.clone_widgets) ?? false,
      });
      return reply.status(201).send(created);
    },
  );

  // Before `/api/dashboards/:id`, so that the static path is never read as an id.
  app.get(
    '/api/dashboards/templates',
    {
      schema: {
        tags,
        summary: 'List dashboard templates: built-in (under builtin/) and saved ones',
        querystring: Type.Object(ListQuery),
        response: {
          200: Paginated('DashboardTemplate', TemplateInfoSchema),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      caller(request);
      const plan = planList(request.query, TEMPLATE_ORDERABLE, 'path');
      return envelope(request, plan, await dashboards.listTemplates(plan));
    },
  );

  app.get(
    '/api/dashboards/:id',
    {
      schema: {
        tags,
        summary: 'Read a dashboard (export=true: its portable form)',
        params: IdParam,
        querystring: Type.Object(ExportQuery),
        response: { 200: DashboardOrExport, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) =>
      parseBoolean(request.query.export)
        ? dashboards.exportOne(caller(request), request.params.id)
        : dashboards.get(caller(request), request.params.id),
  );

  app.put(
    '/api/dashboards/:id',
    {
      schema: {
        tags,
        summary: 'Replace a dashboard (fields left out keep their values; widgets sets the layout)',
        params: IdParam,
        body: DashboardPutSchema,
        response: one,
      },
    },
    async (request) => dashboards.update(caller(request), request.params.id, request.body, false),
  );

  app.patch(
    '/api/dashboards/:id',
    {
      schema: {
        tags,
        summary: 'Change some fields of a dashboard',
        params: IdParam,
        body: DashboardPatchSchema,
        response: one,
      },
    },
    async (request) => dashboards.update(caller(request), request.params.id, request.body, true),
  );

  app.delete(
    '/api/dashboards/:id',
    {
      schema: {
        tags,
        summary: 'Delete a dashboard and the widgets that are on no other dashboard',
        params: IdParam,
        response: deleted,
      },
    },
    async (request, reply) => {
      await dashboards.delete(caller(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/dashboards/:id/templates',
    {
      schema: {
        tags,
        summary: 'Save the dashboard as a template at a path',
        params: IdParam,
        body: TemplatePathSchema,
        response: {
          200: Type.Object({ path: Type.String() }),
          ...errorResponses(400, 401, 403, 404, 409, 413, 415),
        },
      },
    },
    async (request) => dashboards.saveTemplate(caller(request), request.params.id, request.body.path),
  );

  app.post(
    '/api/dashboards/:id/widgets',
    {
      schema: {
        tags,
        summary: 'Create a widget owned by the caller, last on the dashboard',
        params: IdParam,
        body: WidgetBodySchema,
        response: { 200: Type.Ref('Widget'), ...errorResponses(400, 401, 403, 404, 409, 413, 415) },
      },
    },
    async (request) => dashboards.addWidget(caller(request), request.params.id, request.body),
  );

  app.delete(
    '/api/dashboards/:id/widgets',
    {
      schema: {
        tags,
        summary:
          'Detach the listed widgets (all without widget_id); a widget left on no dashboard is deleted',
        params: IdParam,
        querystring: Type.Object({
          widget_id: Type.Optional(Type.String({ description: 'Widget ids, comma-separated.' })),
        }),
        response: deleted,
      },
    },
    async (request, reply) => {
      await dashboards.detachWidgets(
        caller(request),
        request.params.id,
        idList('widget_id', request.query.widget_id),
      );
      return reply.status(204).send(null);
    },
  );

  app.delete(
    '/api/dashboards/:id/widgets/:widget_id',
    {
      schema: {
        tags,
        summary: 'Detach one widget; a widget left on no dashboard is deleted',
        params: WidgetParam,
        response: deleted,
      },
    },
    async (request, reply) => {
      await dashboards.detachWidgets(caller(request), request.params.id, [request.params.widget_id]);
      return reply.status(204).send(null);
    },
  );
}
