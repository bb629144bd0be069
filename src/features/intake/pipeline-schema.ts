import { Type } from 'typebox';
import { IsoDateTime } from '../../core/resource-schema.js';

const Steps = (description: string) => Type.Array(Type.Unknown(), { maxItems: 100, description });

export const PipelineSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    description: Type.String(),
    enabled: Type.Boolean(),
    order: Type.Integer({ description: 'Pipelines run in ascending order (then by id).' }),
    when: Type.String({ description: 'Query-language string: the events it applies to ("" = all).' }),
    steps: Steps('The steps, applied in order to each event it applies to.'),
    owner: Type.Union([Type.Integer(), Type.Null()], { description: 'Null for a built-in.' }),
    builtin: Type.Boolean({
      description: 'Shipped with the product: can be disabled or reordered, not changed.',
    }),
    created_at: IsoDateTime(),
    updated_at: IsoDateTime(),
  },
  { $id: 'Pipeline' },
);

const writable = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'Not blank.' }),
  description: Type.Optional(Type.String({ maxLength: 10_000, description: 'Default "".' })),
  enabled: Type.Optional(Type.Boolean({ description: 'Default true.' })),
  order: Type.Optional(
    Type.Integer({
      minimum: -1_000_000,
      maximum: 1_000_000,
      description: 'Default 200: after the built-ins (10 to 160), so it sees the fields they extract.',
    }),
  ),
  when: Type.Optional(
    Type.String({ maxLength: 10_000, description: 'Query-language string; default "" (every event).' }),
  ),
  steps: Steps(
    'Each step is one kind: grok, regex, kv, json, rename, set, remove, timestamp or drop, with an optional `if` query.',
  ),
};

export const PipelineCreateSchema = Type.Object(writable, {
  additionalProperties: false,
  title: 'PipelineCreate',
});

export const PipelinePatchSchema = Type.Partial(PipelineCreateSchema, {
  additionalProperties: false,
  title: 'PatchedPipeline',
});
