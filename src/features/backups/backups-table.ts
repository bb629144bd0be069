import type { Kysely, Migration, Selectable } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';

/** A backup job's state (docs/api/backups.md). */
export type BackupStatus = 'RUNNING' | 'DONE' | 'ERROR' | 'CANCELLED';

/**
 * Backup jobs (docs/api/backups.md): kept in the metadata store, newest first by their
 * time-ordered id. A backup leaves this table's rows out (a restored data dir is another
 * instance: its jobs' folders are the old machine's).
 */
export interface BackupsTable {
  /** Time-ordered (ULID). */
  id: string;
  status: BackupStatus;
  kind: 'full' | 'incremental' | 'pre-upgrade';
  path: string;
  since: string | null;
  requested_by_id: number | null;
  requested_by_name: string | null;
  started_at: string;
  snapshot_at: string | null;
  finished_at: string | null;
  /** JSON: `{files_done, files_total, bytes_done, bytes_total, fraction}`. */
  progress: string;
  bytes: number | null;
  /** JSON: the manifest's counts, once DONE. */
  counts: string | null;
  /** JSON: `{code, detail}` when ERROR or CANCELLED. */
  error: string | null;
}

export type BackupRow = Selectable<BackupsTable>;

declare module '../../metadata/schema.js' {
  interface Database {
    backups: BackupsTable;
  }
}

export const backupsMigration = (_dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('backups')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('since', 'text')
      .addColumn('requested_by_id', 'integer')
      .addColumn('requested_by_name', 'text')
      .addColumn('started_at', 'text', (c) => c.notNull())
      .addColumn('snapshot_at', 'text')
      .addColumn('finished_at', 'text')
      .addColumn('progress', 'text', (c) => c.notNull())
      .addColumn('bytes', 'double precision')
      .addColumn('counts', 'text')
      .addColumn('error', 'text')
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('backups').execute();
  },
});
