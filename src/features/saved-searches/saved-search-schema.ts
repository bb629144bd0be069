import { type Static, Type } from 'typebox';
import { IsoDateTime } from '../../core/resource-schema.js';
import { OptionalTimeRangeSchema, TimeRangeSchema } from '../../query/time-range.js';

const SharedWith = Type.Object(
  {
    teams: Type.Array(Type.Integer(), { description: 'Ids of the teams it is shared with.' }),
    everyone: Type.Boolean({ description: 'Shared with every user.' }),
  },
  { additionalProperties: false },
);

/** A saved search as the API shows it: the one declaration of its shape. */
export const SavedSearchSchema = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    description: Type.String(),
    query: Type.String({ description: 'Query-language text.' }),
    filter: Type.Array(Type.Unknown(), { description: 'Filter conditions, as in query params.' }),
    time_range: TimeRangeSchema,
    streams: Type.Union([Type.Array(Type.Integer()), Type.Null()], {
      description: 'Stream ids it narrows to; null: every stream the reader may read.',
    }),
    columns: Type.Array(Type.String(), { description: 'The result columns, in order.' }),
    sort: Type.Array(Type.String(), { description: 'Sort terms (`-ts`, `host`).' }),
    owner: Type.Integer(),
    shared_with: SharedWith,
    created_at: IsoDateTime(),
    updated_at: IsoDateTime(),
  },
  { $id: 'SavedSearch' },
);
export type SavedSearch = Static<typeof SavedSearchSchema>;

const FieldName = Type.String({ minLength: 1, maxLength: 256, pattern: '^-?[\\p{L}\\p{N}_.@-]+$' });
const writable = {
  title: Type.String({ minLength: 1, maxLength: 200, description: 'Not blank.' }),
  description: Type.Optional(Type.String({ maxLength: 10_000 })),
  query: Type.Optional(Type.String({ maxLength: 10_000, description: 'Default "".' })),
  filter: Type.Optional(Type.Array(Type.Unknown(), { maxItems: 1000 })),
  // No default here: a PATCH that leaves it out keeps it (the create body adds the default).
  time_range: Type.Optional(OptionalTimeRangeSchema),
  streams: Type.Optional(
    Type.Union([Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 1000 }), Type.Null()]),
  ),
  columns: Type.Optional(Type.Array(FieldName, { maxItems: 100 })),
  sort: Type.Optional(Type.Array(FieldName, { maxItems: 10, description: 'Default ["-ts"].' })),
  shared_with: Type.Optional(
    Type.Object(
      {
        teams: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 1000 })),
        everyone: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
  ),
};

export const SavedSearchCreateSchema = Type.Object(
  { ...writable, time_range: Type.Optional(TimeRangeSchema) },
  { additionalProperties: false },
);
export type SavedSearchInput = Static<typeof SavedSearchCreateSchema>;
/** What a PATCH gives changes; nothing is filled in for what it leaves out (no defaults). */
export const SavedSearchPatchSchema = Type.Partial(Type.Object(writable), { additionalProperties: false });
export type SavedSearchPatch = Static<typeof SavedSearchPatchSchema>;
