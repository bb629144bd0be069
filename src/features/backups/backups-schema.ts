import { Type } from 'typebox';
import { IsoDateTime, OneOf } from '../../core/resource-schema.js';

/**
 * `POST /api/admin/backups`. Each field is checked by the service, in the order of the
 * contract's refusals (docs/api/backups.md), so the first refusal that applies answers.
 */
export const BackupRequestSchema = Type.Object(
  {
    path: Type.Optional(
      Type.Unknown({
        description:
          'The folder to write, on the server’s machine: absolute, new or empty, outside the data dir (string, up to 4,096 characters).',
      }),
    ),
    since: Type.Optional(
      Type.Unknown({ description: 'An earlier complete backup of this data dir (incremental), or null.' }),
    ),
    max_bytes_per_second: Type.Optional(
      Type.Unknown({ description: 'Caps the job’s writes (an integer ≥ 0; 0, the default: unthrottled).' }),
    ),
  },
  { additionalProperties: false },
);

const Count = Type.Integer({ minimum: 0 });

export const BackupJobSchema = Type.Object(
  {
    id: Type.String({ description: 'Time-ordered.' }),
    status: OneOf(['RUNNING', 'DONE', 'ERROR', 'CANCELLED'] as const),
    kind: OneOf(['full', 'incremental', 'pre-upgrade'] as const),
    path: Type.String(),
    since: Type.Union([Type.String(), Type.Null()]),
    requested_by: Type.Object({
      user_id: Type.Union([Type.Integer(), Type.Null()]),
      username: Type.Union([Type.String(), Type.Null()]),
    }),
    started_at: IsoDateTime(),
    snapshot_at: Type.Union([IsoDateTime(), Type.Null()]),
    finished_at: Type.Union([IsoDateTime(), Type.Null()]),
    progress: Type.Object({
      files_done: Count,
      files_total: Count,
      bytes_done: Count,
      bytes_total: Count,
      fraction: Type.Number({ minimum: 0, maximum: 1, description: 'Never goes back; 1 only once DONE.' }),
    }),
    bytes: Type.Union([Count, Type.Null()]),
    counts: Type.Union([
      Type.Object(
        {
          events: Type.Object({ hot: Count, cold: Count }),
          streams: Type.Array(
            Type.Object({
              id: Type.Integer(),
              title: Type.String(),
              hot: Count,
              cold: Count,
              cold_files: Count,
            }),
          ),
          metadata: Type.Record(Type.String(), Count),
        },
        { description: 'The manifest’s counts, once DONE.' },
      ),
      Type.Null(),
    ]),
    error: Type.Union([Type.Object({ code: Type.String(), detail: Type.String() }), Type.Null()]),
  },
  { $id: 'BackupJob' },
);
