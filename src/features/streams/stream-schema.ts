import { type Static, Type } from 'typebox';
import { IsoDateTime } from '../../core/resource-schema.js';

const Ids = (what: string) =>
  Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 1000, description: `Ids of existing ${what}.` });

export const ReadersSchema = Type.Object(
  { teams: Ids('teams'), users: Ids('users') },
  { additionalProperties: false, description: 'Who may read the stream (admins always may).' },
);

/** A stream's events and bytes in each tier (docs/operations/cold-tier.md). */
export const StreamTiersSchema = Type.Object(
  {
    hot: Type.Object({
      events: Type.Integer({ description: 'Its events in the event store, by its rule, all time.' }),
      bytes: Type.Integer({
        description:
          'Their share of the event store’s bytes (its used blocks and its write-ahead log: events not yet checkpointed count at their WAL size).',
      }),
    }),
    cold: Type.Object({
      events: Type.Integer({ description: 'Rows of the cold files filed under it.' }),
      bytes: Type.Integer(),
      files: Type.Integer(),
      oldest_ts: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix seconds; null when none.' }),
      newest_ts: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix seconds; null when none.' }),
    }),
    as_of: IsoDateTime('The cold tier’s round that computed them.'),
  },
  { description: 'The stream in each tier (GET /api/streams/{id}, and each stream with ?counts=true).' },
);
export type StreamTiersView = Static<typeof StreamTiersSchema>;

/** A stream as the API shows it: the one declaration of its shape. */
export const StreamSchema = Type.Object(
  {
    id: Type.Integer(),
    title: Type.String(),
    description: Type.String(),
    rule: Type.Union([Type.String(), Type.Null()], {
      description: 'Query-language text selecting its events; null for the built-in Default.',
    }),
    readers: Type.Object({ teams: Type.Array(Type.Integer()), users: Type.Array(Type.Integer()) }),
    retention_days: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Days its events are kept (0: forever); null follows the retentionDays setting.',
    }),
    hot_days: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'Days its events stay in the event store before they move to the cold tier; null: never move.',
    }),
    owner: Type.Union([Type.Integer(), Type.Null()]),
    builtin: Type.Boolean({ description: 'The Default stream: what no other stream claims.' }),
    created_at: IsoDateTime(),
    updated_at: IsoDateTime(),
    event_count: Type.Optional(
      Type.Integer({ description: 'Its events of the last 24 h (`?counts=true`).' }),
    ),
    tiers: Type.Optional(StreamTiersSchema),
  },
  { $id: 'Stream' },
);
export type Stream = Static<typeof StreamSchema>;

const writable = {
  title: Type.String({ minLength: 1, maxLength: 200, description: 'Unique ignoring case; not blank.' }),
  description: Type.Optional(Type.String({ maxLength: 10_000, description: 'Default "".' })),
  rule: Type.Optional(
    Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()], {
      description: 'Required and not blank, except on the Default stream, which has none.',
    }),
  ),
  readers: Type.Optional(
    Type.Object(
      { teams: Type.Optional(Ids('teams')), users: Type.Optional(Ids('users')) },
      { additionalProperties: false, description: 'Default: nobody but admins.' },
    ),
  ),
  retention_days: Type.Optional(
    Type.Union([Type.Integer({ minimum: 0, maximum: 36_500 }), Type.Null()], {
      description: 'Default null (the retentionDays setting).',
    }),
  ),
  hot_days: Type.Optional(
    Type.Union([Type.Integer({ minimum: 1, maximum: 36_500 }), Type.Null()], {
      description:
        'Days its events stay in the event store before they move to the cold tier; at most the effective retention (0: forever allows any). Default null: never move. Refused on the ClickHouse event store.',
    }),
  ),
};

export const StreamCreateSchema = Type.Object(writable, { additionalProperties: false });
export type StreamInput = Static<typeof StreamCreateSchema>;

export const StreamPatchSchema = Type.Object(
  { ...writable, title: Type.Optional(writable.title) },
  { additionalProperties: false },
);
export type StreamPatch = Static<typeof StreamPatchSchema>;
