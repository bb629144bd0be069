import type { Kysely } from 'kysely';
import type { OrderTerm, Page, PageRequest } from '../../core/list.js';
import { paginate } from '../../metadata/paginate.js';
import type { Database } from '../../metadata/schema.js';
import type { ChannelRow, ChannelUpdate, NewChannelRow } from './alerting-table.js';

const columnOf = (term: OrderTerm): OrderTerm =>
  term.field === 'owner' ? { ...term, field: 'owner_id' } : term;

export class ChannelsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  byId(id: number): Promise<ChannelRow | undefined> {
    return this.db.selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst();
  }

  byIds(ids: readonly number[]): Promise<ChannelRow[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.db
      .selectFrom('channels')
      .selectAll()
      .where('id', 'in', [...ids])
      .execute();
  }

  list(filter: { visibleTo?: number; type?: string }, page: PageRequest): Promise<Page<ChannelRow>> {
    let q = this.db.selectFrom('channels').selectAll();
    if (filter.visibleTo !== undefined) q = q.where('owner_id', '=', filter.visibleTo);
    if (filter.type !== undefined) q = q.where('type', '=', filter.type as ChannelRow['type']);
    return paginate(q, { ...page, ordering: page.ordering.map(columnOf) });
  }

  insert(row: NewChannelRow): Promise<ChannelRow> {
    return this.db.insertInto('channels').values(row).returningAll().executeTakeFirstOrThrow();
  }

  update(id: number, patch: ChannelUpdate): Promise<ChannelRow | undefined> {
    return this.db.updateTable('channels').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(id: number): Promise<boolean> {
    const res = await this.db.deleteFrom('channels').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}
