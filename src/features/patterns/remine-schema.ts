import { Type } from 'typebox';
import { IsoDateTime, Nullable, OneOf } from '../../core/resource-schema.js';

/** `POST /api/patterns/remine`: the range to re-mine, Unix seconds of event time, [from, to). */
export const RemineRequestSchema = Type.Object(
  {
    ts_from: Type.Number({ minimum: 0, description: 'Unix seconds (event time), inclusive.' }),
    ts_to: Type.Number({ minimum: 0, description: 'Unix seconds (event time), exclusive; after ts_from.' }),
  },
  { additionalProperties: false },
);

/** A re-mining job (docs/api/patterns.md#re-mining). */
export const RemineJobSchema = Type.Object(
  {
    job_id: Type.String(),
    state: OneOf(['running', 'done', 'failed', 'stopped'] as const),
    ts_from: Type.Number({ description: 'Unix seconds: the range re-mined starts here.' }),
    ts_to: Type.Number({ description: 'Unix seconds: and ends before this.' }),
    events_done: Type.Integer({ description: 'Events of the range re-mined so far.' }),
    events_total: Type.Integer({
      description: 'Events of the range (counted at the start; never below events_done).',
    }),
    events_changed: Type.Integer({ description: 'Events whose pattern_id changed.' }),
    started: IsoDateTime(),
    finished: Nullable(IsoDateTime()),
    error: Type.Optional(Type.String({ description: 'Why it failed ("interrupted": its server stopped).' })),
  },
  { $id: 'PatternRemineJob' },
);
