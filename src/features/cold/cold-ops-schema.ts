import { type Static, Type } from 'typebox';
import { IsoDateTime } from '../../core/resource-schema.js';

/** `POST /api/cold/verify`. */
export const ColdVerifyRequestSchema = Type.Object(
  {
    stream_id: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Only the files filed under this stream.' }),
    ),
    checksums: Type.Optional(
      Type.Boolean({ description: 'Compare each file’s sha256 with its record (default true).' }),
    ),
  },
  { additionalProperties: false },
);
export type ColdVerifyRequest = Static<typeof ColdVerifyRequestSchema>;

/** `POST /api/cold/import`. */
export const ColdImportRequestSchema = Type.Object(
  {
    path: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'A file or folder inside coldDir: relative to it, or absolute.',
    }),
    stream_id: Type.Optional(
      Type.Integer({ minimum: 1, description: 'File every imported file under this stream.' }),
    ),
  },
  { additionalProperties: false },
);
export type ColdImportRequest = Static<typeof ColdImportRequestSchema>;

const jobFields = {
  id: Type.String(),
  status: Type.Union([Type.Literal('RUNNING'), Type.Literal('DONE'), Type.Literal('ERROR')]),
  started_at: IsoDateTime(),
  finished_at: Type.Union([IsoDateTime(), Type.Null()]),
  error: Type.Optional(Type.String({ description: 'Why a job ended ERROR.' })),
};

export const ColdVerifyJobSchema = Type.Object(
  {
    ...jobFields,
    kind: Type.Literal('verify'),
    files: Type.Integer({ description: 'Records checked.' }),
    events: Type.Integer({ description: 'Their rows, as recorded.' }),
    bytes: Type.Integer({ description: 'Their bytes, as recorded.' }),
    problems: Type.Array(
      Type.Object({
        path: Type.String({ description: 'Relative to coldDir, /-separated.' }),
        problem: Type.Union(
          ['missing', 'size', 'checksum', 'unreadable', 'rows', 'time_range', 'not_recorded'].map((p) =>
            Type.Literal(p),
          ),
        ),
        detail: Type.String(),
      }),
    ),
  },
  { $id: 'ColdVerifyJob' },
);

export const ColdImportJobSchema = Type.Object(
  {
    ...jobFields,
    kind: Type.Literal('import'),
    files: Type.Array(
      Type.Object({
        path: Type.String({ description: 'Where the file was, relative to coldDir.' }),
        status: Type.Union([Type.Literal('imported'), Type.Literal('present'), Type.Literal('refused')]),
        events: Type.Integer(),
        detail: Type.String(),
      }),
    ),
    events: Type.Integer({ description: 'Events imported.' }),
  },
  { $id: 'ColdImportJob' },
);

export type ColdVerifyJob = Static<typeof ColdVerifyJobSchema>;
export type ColdImportJob = Static<typeof ColdImportJobSchema>;
export type ColdJob = ColdVerifyJob | ColdImportJob;
