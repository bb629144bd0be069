import { type Insertable, type Kysely, type Selectable, sql, type Transaction } from 'kysely';
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
import type { LogMetricsTable } from './log-metrics-table.js';

const SHARES: ShareTables = { things: 'log_metrics', teams: 'log_metric_teams', key: 'log_metric_id' };

export type LogMetricRow = Selectable<LogMetricsTable>;
type NewRow = Insertable<LogMetricsTable>;

export interface LogMetricQuery {
  reader: ShareReader;
  nameContains?: string | undefined;
  owners?: readonly number[] | undefined;
  kind?: string | undefined;
  /** true: only those others shared with the reader; false: only the reader's own. */
  shared?: boolean | undefined;
}

/** `%`, `_` and the escape character itself match literally in a LIKE pattern. */
const likeContains = (text: string) => `%${text.replace(/[!%_]/g, '!$&')}%`;

/** Why a write was not made: the name is another metric's, or the owner has their most. */
export type Refused = { taken: true } | { owned: number };

/** Log metrics' definitions and the teams they are shared with. */
export class LogMetricsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  list(query: LogMetricQuery, page: PageRequest): Promise<Page<LogMetricRow>> {
    const { reader } = query;
    let q = this.db.selectFrom('log_metrics').selectAll().where(seenBy(SHARES, reader));
    if (query.owners?.length) q = q.where('owner', 'in', [...query.owners]);
    if (query.kind !== undefined) q = q.where('kind', '=', query.kind);
    if (query.nameContains !== undefined) {
      const pattern = likeContains(query.nameContains);
      q = q.where(sql<boolean>`lower(name) like lower(${pattern}) escape '!'`);
    }
    if (query.shared === true)
      q = q.where('owner', '<>', reader.userId).where(sharedWithReader(SHARES, reader));
    else if (query.shared === false) q = q.where('owner', '=', reader.userId);
    return paginate(q, page);
  }

  /** The metrics a reader sees (theirs and those shared with them), by id; `names` narrows. */
  seen(reader: ShareReader, names?: readonly string[]): Promise<LogMetricRow[]> {
    let q = this.db.selectFrom('log_metrics').selectAll().where(seenBy(SHARES, reader));
    if (names !== undefined)
      q = names.length ? q.where('name', 'in', [...names]) : q.where(sql<boolean>`false`);
    return q.orderBy('id').execute();
  }

  /** Every metric: what the event store counts. */
  all(): Promise<LogMetricRow[]> {
    return this.db.selectFrom('log_metrics').selectAll().orderBy('id').execute();
  }

  byId(id: number): Promise<LogMetricRow | undefined> {
    return this.db.selectFrom('log_metrics').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The team ids each of these metrics is shared with (ascending; none: absent). */
  teamsOf(ids: readonly number[]): Promise<Map<number, number[]>> {
    return teamsOf(this.db, SHARES, ids);
  }

  existingTeams(ids: readonly number[]): Promise<Set<number>> {
    return existingTeams(this.db, ids);
  }

  /**
   * Stores a metric unless its name is taken or its owner already has `maxOwned` (none:
   * unlimited), both decided in the insert's transaction.
   */
  insert(row: NewRow, teams: readonly number[], maxOwned: number | null): Promise<{ id: number } | Refused> {
    return this.db.transaction().execute(async (trx) => {
      if (await nameTaken(trx, row.name)) return { taken: true };
      if (maxOwned !== null) {
        const counted = await trx
          .selectFrom('log_metrics')
          .select(sql<string | number>`count(*)`.as('n'))
          .where('owner', '=', row.owner)
          .executeTakeFirst();
        const owned = Number(counted?.n ?? 0);
        if (owned >= maxOwned) return { owned };
      }
      const { id } = await trx
        .insertInto('log_metrics')
        .values(row)
        .returning('id')
        .executeTakeFirstOrThrow();
      await setTeams(trx, SHARES, id, teams);
      return { id };
    });
  }

  /** Changes a metric (false: it is gone); refused when a new name is another metric's. */
  update(
    id: number,
    change: Partial<NewRow>,
    teams: readonly number[] | undefined,
  ): Promise<boolean | { taken: true }> {
    return this.db.transaction().execute(async (trx) => {
      if (change.name !== undefined && (await nameTaken(trx, change.name, id))) return { taken: true };
      const res = await trx.updateTable('log_metrics').set(change).where('id', '=', id).executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return false;
      if (teams) await setTeams(trx, SHARES, id, teams);
      return true;
    });
  }

  async delete(id: number): Promise<boolean> {
    const res = await this.db.deleteFrom('log_metrics').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}

async function nameTaken(trx: Transaction<Database>, name: string, except?: number): Promise<boolean> {
  let q = trx.selectFrom('log_metrics').select('id').where('name', '=', name);
  if (except !== undefined) q = q.where('id', '<>', except);
  return (await q.executeTakeFirst()) !== undefined;
}
