import { type Static, Type } from 'typebox';
import { IsoDateTime, OneOf } from '../../core/resource-schema.js';

/** An audit record as the API shows it: the one declaration of its shape. */
export const AuditRecordSchema = Type.Object(
  {
    id: Type.Integer(),
    at: IsoDateTime(),
    actor: Type.Object({
      user_id: Type.Union([Type.Integer(), Type.Null()]),
      username: Type.Union([Type.String(), Type.Null()]),
      token_key_id: Type.Union([Type.String(), Type.Null()]),
      address: Type.Union([Type.String(), Type.Null()]),
    }),
    action: Type.String({ description: 'auth.login, query.create, export.download, stream.update, …' }),
    target: Type.Union([
      Type.Object({ kind: Type.String(), id: Type.Union([Type.String(), Type.Null()]) }),
      Type.Null(),
    ]),
    detail: Type.Object({}, { additionalProperties: true }),
    outcome: OneOf(['ok', 'denied', 'error'] as const),
  },
  { $id: 'AuditRecord' },
);
export type AuditRecord = Static<typeof AuditRecordSchema>;
