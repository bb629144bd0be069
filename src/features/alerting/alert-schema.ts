import { type TObject, type TSchema, Type } from 'typebox';
import { IsoDateTime } from '../../core/resource-schema.js';

export const DeliveryStatusSchema = Type.Union([
  Type.Literal('pending'),
  Type.Literal('sent'),
  Type.Literal('failed'),
]);

/**
 * A channel's and a delivery's schemas over the channel kinds: their `type` union and the
 * `config` document, both derived from the one list of kinds (channel-kinds/registry.ts).
 */
export function channelSchemas<TType extends TSchema>(ChannelTypeSchema: TType, ConfigSchema: TObject) {
  const ChannelSchema = Type.Object(
    {
      id: Type.Integer(),
      name: Type.String(),
      type: ChannelTypeSchema,
      config: ConfigSchema,
      owner: Type.Integer(),
      decided_by: Type.Union([Type.Integer(), Type.Null()], {
        description:
          'Who last set its type or config (where it sends): the triggers that notify it match only what this user may read too (null: a deleted user; they then match nothing).',
      }),
      created_at: IsoDateTime(),
      updated_at: IsoDateTime(),
    },
    { $id: 'Channel' },
  );

  const ChannelCreateSchema = Type.Object(
    { name: Type.String({ minLength: 1, maxLength: 200 }), type: ChannelTypeSchema, config: ConfigSchema },
    { additionalProperties: false, title: 'ChannelCreate' },
  );

  const ChannelPatchSchema = Type.Partial(ChannelCreateSchema, {
    additionalProperties: false,
    title: 'PatchedChannel',
  });

  const DeliverySchema = Type.Object(
    {
      id: Type.Integer(),
      trigger_id: Type.Union([Type.Integer(), Type.Null()]),
      schedule_id: Type.Union([Type.Integer(), Type.Null()], {
        description: 'A scheduled report run made it.',
      }),
      report_id: Type.Union([Type.Integer(), Type.Null()], { description: 'The report it carries.' }),
      channel_id: Type.Integer(),
      channel_type: ChannelTypeSchema,
      status: DeliveryStatusSchema,
      attempts: Type.Integer(),
      last_error: Type.Union([Type.String(), Type.Null()]),
      created_at: IsoDateTime(),
      sent_at: Type.Union([IsoDateTime(), Type.Null()]),
      next_attempt_at: Type.Union([IsoDateTime(), Type.Null()], {
        description: 'When it is tried next (pending).',
      }),
      run_as: Type.Union([Type.Integer(), Type.Null()], {
        description:
          'The user whose rights made it (its trigger’s run_as then; null: a test, or a deleted user).',
      }),
      payload: Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            'The notification as sent, to administrators and to the user whose rights made it (`run_as`); to anyone else without what it tells of events (`samples` [], `group` {}, `count` and `search_url` null, no `pattern`; for pattern_rate `change`, `baseline_count` and `ratio` null) and with `withheld: true`.',
        },
      ),
    },
    { $id: 'Delivery' },
  );

  return { ChannelSchema, ChannelCreateSchema, ChannelPatchSchema, DeliverySchema };
}
