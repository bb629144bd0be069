import { Type } from 'typebox';
import { TOKEN_TYPES } from '../../core/identity.js';
import { IsoDateTime, OneOf } from '../../core/resource-schema.js';
import { ADMIN_LEVEL_PERMISSIONS, PERMISSIONS } from '../../shared/permissions.js';

export const PermissionSchema = OneOf(PERMISSIONS, {
  description: `A permission name. Admin-level (${ADMIN_LEVEL_PERMISSIONS.join(', ')}): their holder can change what anyone reads, themselves included; grant them only to people trusted with every event (docs/access.md).`,
});

export const UserSchema = Type.Object(
  {
    id: Type.Integer(),
    username: Type.String(),
    is_admin: Type.Boolean(),
    permissions: Type.Array(PermissionSchema),
    teams: Type.Array(Type.Integer(), {
      description: 'Ids of the teams the user is in, `everyone` included.',
    }),
    local_login: Type.Boolean({
      description:
        'May sign in with a password even when single sign-on turns password sign-in off (a break-glass account).',
    }),
    sso: Type.Boolean({ description: 'Signs in with the OpenID provider (created or linked by it).' }),
    disabled: Type.Boolean({
      description: 'Disabled by an admin: may not sign in, and holds no token.',
    }),
    created_at: IsoDateTime(),
  },
  { $id: 'User' },
);

/**
 * What a username may be, wherever it comes from (the API, the CLI, single sign-on): ASCII
 * letters, digits and `_.@+-`, so no name can pass for another by a look-alike character,
 * and unique ignoring case (`Admin` is `admin`'s).
 */
const USERNAME_CHARS = /^[A-Za-z0-9_.@+-]+$/;
export const USERNAME_RULE = { minLength: 1, maxLength: 150, pattern: USERNAME_CHARS.source } as const;

/** Whether a name follows `USERNAME_RULE`. */
export const isValidUsername = (name: string): boolean =>
  name.length >= USERNAME_RULE.minLength &&
  name.length <= USERNAME_RULE.maxLength &&
  USERNAME_CHARS.test(name);

const Username = Type.String(USERNAME_RULE);
const Password = Type.String({ minLength: 8, maxLength: 1024 });

export const UserCreateSchema = Type.Object(
  {
    username: Username,
    password: Type.Optional(Password),
    is_admin: Type.Optional(Type.Boolean()),
    local_login: Type.Optional(Type.Boolean()),
    // Bounded by the number of permissions: uniqueItems compares every pair.
    permissions: Type.Optional(
      Type.Array(PermissionSchema, { uniqueItems: true, maxItems: PERMISSIONS.length }),
    ),
  },
  { additionalProperties: false },
);

export const UserPatchSchema = Type.Object(
  {
    ...Type.Partial(UserCreateSchema).properties,
    disabled: Type.Optional(
      Type.Boolean({
        description:
          'true: deletes every token of the user (sessions included), ends their live connections, and refuses their sign-ins; false: they may sign in again.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const LoginSchema = Type.Object(
  {
    username: Type.String({ minLength: 1, maxLength: 150 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

export const TokenTypeSchema = OneOf(TOKEN_TYPES, {
  description: 'USER acts as its user; INGEST may only send events.',
});

export const AuthTokenSchema = Type.Object(
  {
    secret_key: Type.String({ description: 'Full only in the creating response; later masked.' }),
    key_id: Type.String(),
    token_type: TokenTypeSchema,
    name: Type.String(),
    owner_id: Type.Integer(),
    created_at: IsoDateTime(),
    expires_at: Type.Union([IsoDateTime(), Type.Null()]),
    last_used_at: Type.Union([IsoDateTime(), Type.Null()]),
  },
  { $id: 'AuthToken' },
);

export const AuthTokenCreateSchema = Type.Object(
  {
    token_type: TokenTypeSchema,
    name: Type.Optional(Type.String({ maxLength: 200 })),
    expires_at: Type.Optional(Type.Union([IsoDateTime(), Type.Null()])),
  },
  { additionalProperties: false },
);
