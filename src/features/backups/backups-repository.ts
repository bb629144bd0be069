import type { Insertable, Kysely, Updateable } from 'kysely';
import type { PageRequest } from '../../core/list.js';
import { paginate } from '../../metadata/paginate.js';
import type { Database } from '../../metadata/schema.js';
import type { BackupRow, BackupsTable } from './backups-table.js';

/** Backup jobs' rows. */
export class BackupsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: Insertable<BackupsTable>): Promise<void> {
    await this.db.insertInto('backups').values(row).execute();
  }

  byId(id: string): Promise<BackupRow | undefined> {
    return this.db.selectFrom('backups').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Newest first. */
  list(page: PageRequest) {
    return paginate(this.db.selectFrom('backups').selectAll(), {
      ...page,
      ordering: [{ field: 'id', desc: true }],
    });
  }

  async update(id: string, change: Updateable<BackupsTable>): Promise<void> {
    await this.db.updateTable('backups').set(change).where('id', '=', id).execute();
  }

  /** Jobs RUNNING when the server stopped: ended ERROR (`interrupted`); returns their rows. */
  async interrupted(nowIso: string): Promise<BackupRow[]> {
    const rows = await this.db.selectFrom('backups').selectAll().where('status', '=', 'RUNNING').execute();
    if (rows.length)
      await this.db
        .updateTable('backups')
        .set({
          status: 'ERROR',
          finished_at: nowIso,
          error: JSON.stringify({ code: 'interrupted', detail: 'The server stopped while the backup ran.' }),
        })
        .where('status', '=', 'RUNNING')
        .execute();
    return rows;
  }
}
