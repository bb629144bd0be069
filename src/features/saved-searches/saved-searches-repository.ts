import {
  type ExpressionBuilder,
  type Insertable,
  type Kysely,
  type Selectable,
  sql,
  type Transaction,
} from 'kysely';
import type { Page, PageRequest } from '../../core/list.js';
import { paginate } from '../../metadata/paginate.js';
import type { Database } from '../../metadata/schema.js';
import type { SavedSearchesTable } from './saved-searches-table.js';

export type SavedSearchRow = Selectable<SavedSearchesTable>;
type NewRow = Insertable<SavedSearchesTable>;

/** Who lists: the saved searches they may see are theirs, shared with them, or (`all`) every one. */
export interface SavedSearchReader {
  userId: number;
  /** The teams the reader belongs to. */
  teams: readonly number[];
  /** An admin: sees every saved search. */
  all: boolean;
}

export interface SavedSearchQuery {
  reader: SavedSearchReader;
  /** Title contains, ignoring case. */
  titleContains?: string | undefined;
  /** Owned by any of these users. */
  owners?: readonly number[] | undefined;
  /** true: only those others shared with the reader; false: only the reader's own. */
  shared?: boolean | undefined;
}

/** `%`, `_` and the escape character itself match literally in a LIKE pattern. */
const likeContains = (text: string) => `%${text.replace(/[!%_]/g, '!$&')}%`;

/** Saved searches and the teams they are shared with. */
export class SavedSearchesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** One page of the saved searches the reader may see that match the query, and how many match. */
  list(query: SavedSearchQuery, page: PageRequest): Promise<Page<SavedSearchRow>> {
    const { reader } = query;
    let q = this.db.selectFrom('saved_searches').selectAll();
    const sharedWithReader = (eb: ExpressionBuilder<Database, 'saved_searches'>) =>
      eb.or([
        eb('share_everyone', '=', 1),
        ...(reader.teams.length
          ? [
              eb.exists(
                eb
                  .selectFrom('saved_search_teams')
                  .select('saved_search_teams.team_id')
                  .whereRef('saved_search_teams.saved_search_id', '=', 'saved_searches.id')
                  .where('saved_search_teams.team_id', 'in', [...reader.teams]),
              ),
            ]
          : []),
      ]);
    if (!reader.all) q = q.where((eb) => eb.or([eb('owner', '=', reader.userId), sharedWithReader(eb)]));
    if (query.owners?.length) q = q.where('owner', 'in', [...query.owners]);
    if (query.titleContains !== undefined) {
      const pattern = likeContains(query.titleContains);
      q = q.where(sql<boolean>`lower(title) like lower(${pattern}) escape '!'`);
    }
    if (query.shared === true) q = q.where('owner', '<>', reader.userId).where((eb) => sharedWithReader(eb));
    else if (query.shared === false) q = q.where('owner', '=', reader.userId);
    return paginate(q, page);
  }

  byId(id: number): Promise<SavedSearchRow | undefined> {
    return this.db.selectFrom('saved_searches').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The team ids each of these saved searches is shared with (ascending; none: absent). */
  async teamsOf(ids: readonly number[]): Promise<Map<number, number[]>> {
    const out = new Map<number, number[]>();
    if (!ids.length) return out;
    const rows = await this.db
      .selectFrom('saved_search_teams')
      .selectAll()
      .where('saved_search_id', 'in', [...ids])
      .orderBy('team_id')
      .execute();
    for (const r of rows) {
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

  /**
   * Stores a saved search unless its owner already has `maxOwned` (then `owned`, their
   * count): counted in the same transaction as the insert.
   */
  insert(
    row: NewRow,
    teams: readonly number[],
    maxOwned: number,
  ): Promise<{ id: number } | { owned: number }> {
    return this.db.transaction().execute(async (trx) => {
      const counted = await trx
        .selectFrom('saved_searches')
        .select(sql<string | number>`count(*)`.as('n'))
        .where('owner', '=', row.owner)
        .executeTakeFirst();
      const owned = Number(counted?.n ?? 0);
      if (owned >= maxOwned) return { owned };
      const { id } = await trx
        .insertInto('saved_searches')
        .values(row)
        .returning('id')
        .executeTakeFirstOrThrow();
      await setTeams(trx, id, teams);
      return { id };
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
