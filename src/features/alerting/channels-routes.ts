import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { envelope, planList } from '../../http/list.js';
import { caller } from '../../http/plugins/auth.js';
import {
  errorResponses,
  ListQuery,
  Paginated,
  parseBoolean,
  ShowAllQuery,
} from '../../http/schemas/common.js';
import { DeliveryStatusSchema } from './alert-schema.js';
import { channelKinds } from './channel-kinds/registry.js';
import type { ChannelsService } from './channels-service.js';
import type { DeliveriesService } from './deliveries-service.js';

const IdParam = Type.Object({ id: Type.Integer({ minimum: 1 }) });
const { ChannelCreateSchema, ChannelPatchSchema } = channelKinds.schemas;

export async function channelRoutes(
  fastify: FastifyInstance,
  opts: { channels: ChannelsService; deliveries: DeliveriesService },
) {
  const { channels, deliveries } = opts;
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['alerting'];
  const one = { 200: Type.Ref('Channel'), ...errorResponses(400, 401, 403, 404, 413, 415) };

  app.get(
    '/api/channels',
    {
      schema: {
        tags,
        summary: 'List your notification channels (everyone’s with show_all for manage_triggers holders)',
        querystring: Type.Object({
          ...ListQuery,
          ...ShowAllQuery,
          type: Type.Optional(channelKinds.TypeSchema),
        }),
        response: { 200: Paginated('Channel', Type.Ref('Channel')), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const q = request.query;
      const plan = planList(q, ['id', 'name', 'type', 'created_at', 'updated_at'], 'id');
      const page = await channels.list(
        caller(request),
        { showAll: parseBoolean(q.show_all) ?? false, type: q.type },
        plan,
      );
      return envelope(request, plan, page);
    },
  );

  app.post(
    '/api/channels',
    {
      schema: {
        tags,
        summary: `Create a notification channel (${channelKinds.titles})`,
        body: ChannelCreateSchema,
        response: { 201: Type.Ref('Channel'), ...errorResponses(400, 401, 403, 413, 415) },
      },
    },
    async (request, reply) => reply.status(201).send(await channels.create(caller(request), request.body)),
  );

  app.get(
    '/api/channels/:id',
    {
      schema: {
        tags,
        summary: 'Read a channel',
        params: IdParam,
        response: { 200: Type.Ref('Channel'), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => channels.get(caller(request), request.params.id),
  );

  app.patch(
    '/api/channels/:id',
    {
      schema: { tags, summary: 'Change a channel', params: IdParam, body: ChannelPatchSchema, response: one },
    },
    async (request) => channels.update(caller(request), request.params.id, request.body),
  );

  app.put(
    '/api/channels/:id',
    {
      schema: {
        tags,
        summary: 'Replace a channel',
        params: IdParam,
        body: ChannelCreateSchema,
        response: one,
      },
    },
    async (request) => channels.update(caller(request), request.params.id, request.body),
  );

  app.delete(
    '/api/channels/:id',
    {
      schema: {
        tags,
        summary: 'Delete a channel and its deliveries (triggers stop notifying it)',
        params: IdParam,
        response: { 204: Type.Null(), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      await channels.delete(caller(request), request.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/channels/:id/test',
    {
      schema: {
        tags,
        summary: 'Send a test notification now and answer how it went',
        description:
          'Answers 200 with the outcome whether or not it arrived: `sent`, the `error` (an HTTP status, a refused connection, no answer within 10 s, an SMTP answer) and how long it took. PagerDuty: a trigger and its resolve; Opsgenie: a create and its close (priority P5); a webhook with a body_template renders it with kind "test".',
        params: IdParam,
        response: {
          200: Type.Object({
            sent: Type.Boolean(),
            error: Type.Union([Type.String(), Type.Null()]),
            duration_ms: Type.Integer(),
          }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => channels.test(caller(request), request.params.id, request.server.publicBaseUrl()),
  );

  app.get(
    '/api/deliveries',
    {
      schema: {
        tags,
        summary:
          'Notifications sent, waiting or given up (of your triggers and channels; all for manage_triggers holders)',
        querystring: Type.Object({
          ...ListQuery,
          trigger_id: Type.Optional(Type.Integer({ minimum: 1 })),
          schedule_id: Type.Optional(Type.Integer({ minimum: 1 })),
          channel_id: Type.Optional(Type.Integer({ minimum: 1 })),
          status: Type.Optional(DeliveryStatusSchema),
        }),
        response: { 200: Paginated('Delivery', Type.Ref('Delivery')), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const q = request.query;
      const plan = planList(q, ['id', 'created_at', 'status'], '-id');
      const page = await deliveries.list(
        caller(request),
        { triggerId: q.trigger_id, scheduleId: q.schedule_id, channelId: q.channel_id, status: q.status },
        plan,
      );
      return envelope(request, plan, page);
    },
  );
}
