import { type Static, Type } from 'typebox';
import { IsoDateTime } from '../../core/resource-schema.js';

/** A team as the API shows it: the one declaration of its shape. */
export const TeamSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    members: Type.Array(Type.Integer(), {
      description: 'User ids, ascending; the built-in `everyone` lists every user.',
    }),
    builtin: Type.Boolean({ description: 'The built-in team `everyone`: every user, not editable.' }),
    provider_synced: Type.Boolean({
      description:
        'Single sign-on manages its members: at each sign-in, a user whose provider groups name it (ignoring case) joins it, and one whose groups do not leaves it.',
    }),
    created_at: IsoDateTime(),
  },
  { $id: 'Team' },
);
export type Team = Static<typeof TeamSchema>;

const Name = Type.String({ minLength: 1, maxLength: 100, description: 'Unique ignoring case; not blank.' });
const Members = Type.Array(Type.Integer({ minimum: 1 }), {
  maxItems: 10_000,
  description: 'Ids of existing users; duplicates count once.',
});

const ProviderSynced = Type.Boolean({
  description: 'Let single sign-on manage the members (default false).',
});

export const TeamCreateSchema = Type.Object(
  { name: Name, members: Type.Optional(Members), provider_synced: Type.Optional(ProviderSynced) },
  { additionalProperties: false },
);
export type TeamInput = Static<typeof TeamCreateSchema>;

export const TeamPatchSchema = Type.Object(
  {
    name: Type.Optional(Name),
    members: Type.Optional(Members),
    provider_synced: Type.Optional(ProviderSynced),
  },
  { additionalProperties: false },
);
export type TeamPatch = Static<typeof TeamPatchSchema>;
