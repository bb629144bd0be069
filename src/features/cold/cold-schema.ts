import { type Static, Type } from 'typebox';
import { IsoDateTime } from '../../core/resource-schema.js';

/** A file of the cold tier as the API shows it (`GET /api/cold/files`). */
export const ColdFileSchema = Type.Object(
  {
    id: Type.Integer(),
    stream_id: Type.Integer({ description: 'The stream the file is filed under (its events’ home).' }),
    day: Type.String({ description: 'The UTC day of every row’s ts, YYYY-MM-DD.' }),
    part: Type.Integer({ description: 'Counts from 0 in each stream-day folder.' }),
    path: Type.String({ description: 'Relative to coldDir, /-separated.' }),
    rows: Type.Integer(),
    bytes: Type.Integer(),
    min_ts: Type.Number({ description: 'Unix seconds, ms precision.' }),
    max_ts: Type.Number({ description: 'Unix seconds, ms precision.' }),
    min_ev_id: Type.String(),
    max_ev_id: Type.String(),
    sha256: Type.String({ description: 'Of the file, hex.' }),
    created_at: IsoDateTime(),
    summary_bytes: Type.Integer({ description: 'Bytes of the file’s skipping summary (0: none built).' }),
  },
  { $id: 'ColdFile' },
);
export type ColdFileView = Static<typeof ColdFileSchema>;
