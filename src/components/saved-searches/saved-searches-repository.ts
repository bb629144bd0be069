import type { Insertable, Kysely, Selectable, Transaction } from 'kysely';
import type { Database } from '../../metadata/schema.js';
import type { SavedSearchesTable } from './saved-searches-table.js';

export type SavedSearchRow = Selectable<SavedSearchesTable>;
type NewRow = Insertable<SavedSearchesTable>;

/** Saved searches and the teams they are shared with. */
export class SavedSearchesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Every saved search, newest first: few enough to filter in the service. */
  all(): Promise<SavedSearchRow[]> {
    return this.db.selectFrom('saved_searches').selectAll().orderBy('id', 'desc').execute();
  }

  byId(id: number): Promise<SavedSearchRow | undefined> {
    return this.db.selectFrom('saved_searches').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The team ids each saved search is shared with. */
  async teams(): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    for (const r of await this.db.selectFrom('saved_search_teams').selectAll().orderBy('team_id').execute()) {
      const list = out.get(r.saved_search_id) ?? [];
      list.push(r.team_id);
      out.set(r.saved_search_id, list);
    }
    return out;
  }

  /** Which of the given team ids exist. */
  async existingTeams(ids: readonly number[]): Promise<Set<number>> {
    if (!ids.length) return new Set();
    const rows = await this.db
      .selectFrom('teams')
      .select('id')
      .where('id', 'in', [...ids])
      .execute();
    return new Set(rows.map((r) => r.id));
  }

  insert(row: NewRow, teams: readonly number[]): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const { id } = await trx
        .insertInto('saved_searches')
        .values(row)
        .returning('id')
        .executeTakeFirstOrThrow();
      await setTeams(trx, id, teams);
      return id;
    });
  }

  update(id: number, change: Partial<NewRow>, teams: readonly number[] | undefined): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const res = await trx.updateTable('saved_searches').set(change).where('id', '=', id).executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return false;
      if (teams) await setTeams(trx, id, teams);
      return true;
    });
  }

  async delete(id: number): Promise<boolean> {
    const res = await this.db.deleteFrom('saved_searches').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}

async function setTeams(trx: Transaction<Database>, id: number, teams: readonly number[]) {
  await trx.deleteFrom('saved_search_teams').where('saved_search_id', '=', id).execute();
  if (teams.length)
    await trx
      .insertInto('saved_search_teams')
      .values(teams.map((team_id) => ({ saved_search_id: id, team_id })))
      .execute();
}
