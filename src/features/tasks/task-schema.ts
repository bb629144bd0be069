import { Type } from 'typebox';
import { IsoDateTime, Nullable, OneOf } from '../../core/resource-schema.js';
import type { TaskPriority } from './tasks-table.js';

/** A task's priorities (the column's values), lowest first. */
export const TASK_PRIORITIES = [
  'low',
  'medium',
  'high',
  'critical',
] as const satisfies readonly TaskPriority[];

export const PrioritySchema = OneOf(TASK_PRIORITIES, {
  description: 'low, medium (the default), high or critical.',
});

export const TaskSchema = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    description: Type.String(),
    owner: Type.Integer({ description: 'Id of the user who created the task.' }),
    assigned_to: Nullable(Type.Integer({ description: 'Id of the assigned user.' })),
    is_open: Type.Boolean(),
    due_date: Nullable(IsoDateTime()),
    is_overdue: Type.Boolean({ description: 'Open and due_date in the past (computed when read).' }),
    priority: PrioritySchema,
    ev_ids: Type.Array(Type.String(), { description: 'Ids of the related events.' }),
    trigger_id: Nullable(Type.Integer({ description: 'The trigger that opened the task, if any.' })),
    created_at: IsoDateTime(),
    updated_at: IsoDateTime(),
    closed_at: Nullable(IsoDateTime('When the task was closed; null while open.')),
  },
  { $id: 'Task' },
);

/** The writable fields; PUT requires `title` and resets the others to their defaults. */
const writable = {
  title: Type.String({ minLength: 1, maxLength: 200, description: 'Not blank.' }),
  description: Type.Optional(Type.String({ maxLength: 10_000, description: 'Default "".' })),
  assigned_to: Type.Optional(
    Type.Union(
      [
        Type.Integer({ minimum: 1, description: 'Id of an existing user.' }),
        Type.String({ minLength: 1, maxLength: 150, description: 'Username of an existing user.' }),
        Type.Null(),
      ],
      {
        description:
          'The assignee: a user id or a username (as the `assigned_to` filter takes), null for none; default null. Answers always give the id.',
      },
    ),
  ),
  is_open: Type.Optional(Type.Boolean({ description: 'Default true.' })),
  due_date: Type.Optional(
    Nullable(
      Type.String({
        maxLength: 64,
        description:
          'ISO 8601 date-time (UTC when it has no offset) or a date YYYY-MM-DD (midnight UTC); ' +
          '"" or null for none.',
      }),
    ),
  ),
  priority: Type.Optional(PrioritySchema),
  ev_ids: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      maxItems: 1000,
      description: 'Related event ids (duplicates are dropped); default [].',
    }),
  ),
};

export const TaskCreateSchema = Type.Object(writable, { additionalProperties: false, title: 'TaskCreate' });

export const TaskPatchSchema = Type.Partial(TaskCreateSchema, {
  additionalProperties: false,
  title: 'PatchedTask',
});
