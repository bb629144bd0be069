import type { Kysely } from 'kysely';
import type { Database } from '../../metadata/schema.js';
import type { QueryRow } from './queries-table.js';

export class QueriesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: QueryRow): Promise<void> {
    await this.db.insertInto('queries').values(row).execute();
  }

  byId(id: string): Promise<QueryRow | undefined> {
    return this.db.selectFrom('queries').selectAll().where('query_id', '=', id).executeTakeFirst();
  }

  async touch(id: string, at: string): Promise<void> {
    await this.db.updateTable('queries').set({ last_used_at: at }).where('query_id', '=', id).execute();
  }

  async delete(id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('queries').where('query_id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** Ids of queries last used before the cut-off. */
  async unusedSince(before: string, limit = 1000): Promise<string[]> {
    const rows = await this.db
      .selectFrom('queries')
      .select('query_id')
      .where('last_used_at', '<', before)
      .limit(limit)
      .execute();
    return rows.map((r) => r.query_id);
  }
}
