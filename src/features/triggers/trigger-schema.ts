import { Type } from 'typebox';
import { IsoDateTime, Nullable } from '../../core/resource-schema.js';
import type { PatternRateCondition } from '../alerting/index.js';
import { PrioritySchema } from '../tasks/task-schema.js';

export const ConditionSchema = Type.Union(
  [
    Type.Object({ type: Type.Literal('match') }, { additionalProperties: false }),
    Type.Object(
      {
        type: Type.Literal('threshold'),
        window_seconds: Type.Integer({ minimum: 1, maximum: 86_400, description: 'The sliding window (s).' }),
        op: Type.Union([Type.Literal('gt'), Type.Literal('gte'), Type.Literal('lt'), Type.Literal('lte')]),
        value: Type.Integer({ minimum: 0, maximum: 1_000_000_000 }),
        group_by: Type.Optional(
          Type.Array(Type.String({ maxLength: 200 }), {
            maxItems: 5,
            description:
              'Fields whose values make groups, each counted on its own; absent or [] (the default): one count of every match.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('new_pattern'),
        warmup_seconds: Type.Optional(
          Type.Integer({
            minimum: 0,
            maximum: 30 * 86_400,
            description:
              'Patterns first seen within this long of the trigger’s creation are not new to it (s); default 3600.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('pattern_rate'),
        window_seconds: Type.Optional(
          Type.Integer({
            minimum: 10,
            maximum: 86_400,
            description: 'Windows aligned on Unix time (s); default 300.',
          }),
        ),
        baseline: Type.Optional(
          // An enum, not a union of literals: a wrong value is then told at its own key.
          Type.Unsafe<PatternRateCondition['baseline']>({
            type: 'string',
            enum: ['previous', 'same_time_last_week', 'rolling_24h'],
            description:
              'What a window is compared with: the latest earlier window in which the pattern was not firing (`previous`, default), the window a week before, or the 24 h before (scaled to the window).',
          }),
        ),
        direction: Type.Optional(
          Type.Unsafe<PatternRateCondition['direction']>({
            type: 'string',
            enum: ['up', 'down', 'both'],
            description:
              'Surges and new patterns (`up`), drops and disappearances (`down`), or both (default).',
          }),
        ),
        min_ratio: Type.Optional(
          Type.Number({ exclusiveMinimum: 1, maximum: 1000, description: 'Least change factor; default 3.' }),
        ),
        min_count: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: 1_000_000_000,
            description:
              'Least count of the busier side (the window for up, the baseline for down); default 20.',
          }),
        ),
        steady_windows: Type.Optional(
          Type.Integer({
            minimum: 2,
            maximum: 100,
            description: 'Windows of at least min_count before a pattern counts as gone; default 3.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
  ],
  {
    description:
      '`match`: every matching event (default). `threshold`: fires when the count of matching events in the sliding window meets `op value` (per group), again only after it stopped; `lt`/`lte` also fire on silence. `new_pattern`: fires once per pattern (message template) first seen after the warm-up, with its template and event. `pattern_rate`: fires per pattern whose count in a window surges, appears, drops or disappears against its baseline (query and filter may then be empty).',
  },
);

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
    condition: ConditionSchema,
    notify: Type.Array(Type.Integer(), { description: 'Channel ids told when it fires.' }),
    cooldown_seconds: Type.Integer({
      description: 'Least time between two notifications of one trigger and group.',
    }),
    owner: Type.Integer(),
    run_as: Nullable(
      Type.Integer({
        description:
          'The user whose rights it runs with: who last set its query, filter, condition or channels (null: a deleted user; it then matches nothing).',
      }),
    ),
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
  condition: Type.Optional(ConditionSchema),
  notify: Type.Optional(
    Type.Array(Type.Integer({ minimum: 1 }), {
      maxItems: 20,
      description: 'Channel ids (yours); default [].',
    }),
  ),
  cooldown_seconds: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 604_800, description: 'Default 300.' }),
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
