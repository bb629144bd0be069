import type { Kysely } from 'kysely';
import type { PageRequest } from '../../core/list.js';
import { inChunks } from '../../metadata/chunks.js';
import { paginate } from '../../metadata/paginate.js';
import type { Database } from '../../metadata/schema.js';
import type { NewWidgetRow, WidgetRow, WidgetUpdate } from './dashboards-table.js';

export interface WidgetFilter {
  /** Restrict to this owner (the caller); undefined = everyone's. */
  ownerId?: number;
  title?: string;
}

export class WidgetsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  byId(id: number): Promise<WidgetRow | undefined> {
    return this.db.selectFrom('widgets').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The widgets with these ids (any order; unknown ids are absent). */
  byIds(ids: number[]): Promise<WidgetRow[]> {
    return inChunks(ids, (slice) =>
      this.db.selectFrom('widgets').selectAll().where('id', 'in', slice).execute(),
    );
  }

  list(filter: WidgetFilter, page: PageRequest) {
    let q = this.db.selectFrom('widgets').selectAll();
    if (filter.ownerId !== undefined) q = q.where('owner_id', '=', filter.ownerId);
    if (filter.title !== undefined) q = q.where('title', '=', filter.title);
    return paginate(q, {
      ...page,
      ordering: page.ordering.map((t) => (t.field === 'owner' ? { ...t, field: 'owner_id' } : t)),
    });
  }

  insert(row: NewWidgetRow): Promise<WidgetRow> {
    return this.db.insertInto('widgets').values(row).returningAll().executeTakeFirstOrThrow();
  }

  update(id: number, patch: WidgetUpdate): Promise<WidgetRow | undefined> {
    return this.db.updateTable('widgets').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async deleteMany(ids: number[]): Promise<number> {
    if (!ids.length) return 0;
    const res = await this.db.deleteFrom('widgets').where('id', 'in', ids).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
