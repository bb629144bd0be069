import { type TSchema, Type } from 'typebox';
import { IsoDateTime } from './common.js';
import { PrioritySchema } from './tasks.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const TriggerSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    description: Type.String(),
    severity: PrioritySchema,
    query: Type.String({
      description:
        'Query-language string (the language is described in the API description), AND-ed with filter.',
    }),
    filter: Type.Array(Type.Unknown(), { description: 'Filter conditions, as in query params.' }),
    enabled: Type.Boolean(),
    create_task: Type.Boolean({ description: 'Open (or extend) a task when it matches.' }),
    assign_to: Nullable(Type.Integer({ description: 'Assignee of the tasks it opens.' })),
    owner: Type.Integer(),
    created_at: IsoDateTime(),
    updated_at: IsoDateTime(),
  },
  { $id: 'Trigger' },
);

const writable = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'Not blank.' }),
  description: Type.Optional(Type.String({ maxLength: 10_000, description: 'Default "".' })),
  severity: Type.Optional(PrioritySchema),
  query: Type.Optional(
    Type.String({
      maxLength: 10_000,
      description: 'Query-language string (the language is described in the API description); default "".',
    }),
  ),
  filter: Type.Optional(
    Type.Array(Type.Unknown(), { maxItems: 1000, description: 'Filter conditions; default [].' }),
  ),
  enabled: Type.Optional(Type.Boolean({ description: 'Default true.' })),
  create_task: Type.Optional(Type.Boolean({ description: 'Default false.' })),
  assign_to: Type.Optional(
    Nullable(Type.Integer({ minimum: 1, description: 'Id of an existing user; default null.' })),
  ),
};

export const TriggerCreateSchema = Type.Object(writable, {
  additionalProperties: false,
  title: 'TriggerCreate',
});

export const TriggerPatchSchema = Type.Partial(TriggerCreateSchema, {
  additionalProperties: false,
  title: 'PatchedTrigger',
});
