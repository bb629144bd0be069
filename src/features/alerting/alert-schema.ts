import { Type } from 'typebox';
import { IsoDateTime } from '../../core/resource-schema.js';

export const ChannelTypeSchema = Type.Union([
  Type.Literal('webhook'),
  Type.Literal('slack'),
  Type.Literal('email'),
  Type.Literal('teams'),
  Type.Literal('pagerduty'),
  Type.Literal('opsgenie'),
]);

const ConfigSchema = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'webhook {url, headers?, secret?, body_template?, content_type?} (JSON POST, or the body_template rendered; with a secret, X-Logscope-Signature: sha256=<hex HMAC-SHA256 of the body>; the secret reads back as "********", and sending that back keeps it); slack {url} (incoming webhook); email {to: [...]} (through smtpUrl); teams {url} (a Workflows webhook URL; an Adaptive Card); pagerduty {routing_key, severity_map?} (Events API v2); opsgenie {api_key, region?: us|eu, priority_map?} (Alert API). Routing and API keys read back as "********", Slack and Teams URLs as their origin and /********.',
  },
);

export const ChannelSchema = Type.Object(
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

export const ChannelCreateSchema = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }), type: ChannelTypeSchema, config: ConfigSchema },
  { additionalProperties: false, title: 'ChannelCreate' },
);

export const ChannelPatchSchema = Type.Partial(ChannelCreateSchema, {
  additionalProperties: false,
  title: 'PatchedChannel',
});

export const DeliveryStatusSchema = Type.Union([
  Type.Literal('pending'),
  Type.Literal('sent'),
  Type.Literal('failed'),
]);

export const DeliverySchema = Type.Object(
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
