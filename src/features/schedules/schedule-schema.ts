import { type Static, Type } from 'typebox';
import { IsoDateTime, OneOf } from '../../core/resource-schema.js';

/** The formats a schedule renders (§6's files). */
export const SCHEDULE_FORMATS = ['pdf', 'docx', 'xlsx', 'csv'] as const;
export type ScheduleFormat = (typeof SCHEDULE_FORMATS)[number];

const Source = Type.Union(
  [
    Type.Object({ dashboard_id: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
    Type.Object({ saved_search_id: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
  ],
  { description: 'Exactly one of `{dashboard_id}` or `{saved_search_id}`, which the owner can see.' },
);

const Preset = Type.Object(
  { preset: Type.String({ maxLength: 64, description: 'A preset or last_<n>_<minutes|hours|days>' }) },
  { additionalProperties: false },
);

const LastRunSchema = Type.Object({
  at: IsoDateTime(),
  trigger: OneOf(['cron', 'manual'] as const),
  status: OneOf(['running', 'ok', 'failed'] as const),
  report_id: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  deliveries: Type.Array(
    Type.Object({
      channel_id: Type.Integer(),
      delivery_id: Type.Union([Type.Integer(), Type.Null()]),
      status: Type.String({ description: 'pending, sent or failed (or failed when none was made).' }),
    }),
  ),
});
export type LastRun = Static<typeof LastRunSchema>;

/** A schedule as the API shows it: the one declaration of its shape. */
export const ScheduleSchema = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    description: Type.String(),
    owner: Type.Integer(),
    source: Source,
    format: OneOf(SCHEDULE_FORMATS),
    time_range: Type.Union([Preset, Type.Null()], {
      description: "Evaluated at each run's start; null: the source's own range.",
    }),
    cron: Type.String(),
    time_zone: Type.String(),
    deliver_to: Type.Array(Type.Integer()),
    enabled: Type.Boolean(),
    keep_reports: Type.Integer(),
    last_run: Type.Union([LastRunSchema, Type.Null()]),
    next_run_at: Type.Union([IsoDateTime(), Type.Null()], { description: 'Null while disabled.' }),
    created_at: IsoDateTime(),
    updated_at: IsoDateTime(),
  },
  { $id: 'Schedule' },
);
export type Schedule = Static<typeof ScheduleSchema>;

const writable = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'Not blank.' }),
  description: Type.Optional(Type.String({ maxLength: 10_000 })),
  source: Source,
  format: Type.String({ maxLength: 20, description: SCHEDULE_FORMATS.join(', ') }),
  // Absolute ranges are no range for a recurring run: the service names them (400 on time_range).
  time_range: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
  cron: Type.String({ maxLength: 1000, description: 'Five fields; at most 100 characters.' }),
  time_zone: Type.Optional(Type.String({ maxLength: 100, description: 'IANA name (default UTC).' })),
  deliver_to: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 1000 })),
  enabled: Type.Optional(Type.Boolean()),
  keep_reports: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
};

export const ScheduleCreateSchema = Type.Object(writable, { additionalProperties: false });
export type ScheduleInput = Static<typeof ScheduleCreateSchema>;
export const SchedulePatchSchema = Type.Partial(Type.Object(writable), { additionalProperties: false });
export type SchedulePatch = Static<typeof SchedulePatchSchema>;
