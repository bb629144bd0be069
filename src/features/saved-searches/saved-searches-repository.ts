import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type { Page, PageRequest } from '../../core/list.js';
import { paginate } from '../../metadata/paginate.js';
import type { Database } from '../../metadata/schema.js';
import {
  existingTeams,
  type ShareReader,
  type ShareTables,
  seenBy,
  setTeams,
  sharedWithReader,
  teamsOf,
} from '../teams/index.js';
import type { SavedSearchesTable } from './saved-searches-table.js';

const SHARES: ShareTables = { things: 'saved_searches', teams: 'saved_search_teams', key: 'saved_search_id' };

export type SavedSearchRow = Selectable<SavedSearchesTable>;
type NewRow = Insertable<SavedSearchesTable>;

export interface SavedSearchQuery {
  reader: ShareReader;
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
    let q = this.db.selectFrom('saved_searches').selectAll().where(seenBy(SHARES, reader));
    if (query.owners?.length) q = q.where('owner', 'in', [...query.owners]);
    if (query.titleContains !== undefined) {
      const pattern = likeContains(query.titleContains);
      q = q.where(sql<boolean>`lower(title) like lower(${pattern}) escape '!'`);
    }
    if (query.shared === true)
      q = q.where('owner', '<>', reader.userId).where(sharedWithReader(SHARES, reader));
    else if (query.shared === false) q = q.where('owner', '=', reader.userId);
    return paginate(q, page);
  }

  byId(id: number): Promise<SavedSearchRow | undefined> {
    return this.db.selectFrom('saved_searches').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The team ids each of these saved searches is shared with (ascending; none: absent). */
  teamsOf(ids: readonly number[]): Promise<Map<number, number[]>> {
    return teamsOf(this.db, SHARES, ids);
  }

  existingTeams(ids: readonly number[]): Promise<Set<number>> {
    return existingTeams(this.db, ids);
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
      await setTeams(trx, SHARES, id, teams);
      return { id };
    });
  }

  update(id: number, change: Partial<NewRow>, teams: readonly number[] | undefined): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const res = await trx.updateTable('saved_searches').set(change).where('id', '=', id).executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return false;
      if (teams) await setTeams(trx, SHARES, id, teams);
      return true;
    });
  }

  async delete(id: number): Promise<boolean> {
    const res = await this.db.deleteFrom('saved_searches').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}
