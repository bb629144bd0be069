import type { Kysely } from 'kysely';
import type { OrderTerm, Page, PageRequest } from '../../core/list.js';
import { own } from '../../core/own.js';
import { paginate } from '../../metadata/paginate.js';
import type { Database } from '../../metadata/schema.js';
import type { NewPipelineRow, PipelineRow, PipelineUpdate } from './pipelines-table.js';

const COLUMNS: Record<string, string> = { order: 'run_order', owner: 'owner_id' };
const columnOf = (term: OrderTerm): OrderTerm => ({ ...term, field: own(COLUMNS, term.field) ?? term.field });

export class PipelinesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  byId(id: number): Promise<PipelineRow | undefined> {
    return this.db.selectFrom('pipelines').selectAll().where('id', '=', id).executeTakeFirst();
  }

  list(filter: { enabled?: boolean; builtin?: boolean }, page: PageRequest): Promise<Page<PipelineRow>> {
    let q = this.db.selectFrom('pipelines').selectAll();
    if (filter.enabled !== undefined) q = q.where('enabled', '=', filter.enabled ? 1 : 0);
    if (filter.builtin !== undefined) q = q.where('builtin_key', filter.builtin ? 'is not' : 'is', null);
    return paginate(q, { ...page, ordering: page.ordering.map(columnOf) });
  }

  /** Every pipeline, in the order intake runs them. */
  all(): Promise<PipelineRow[]> {
    return this.db.selectFrom('pipelines').selectAll().orderBy('run_order').orderBy('id').execute();
  }

  /**
   * Writes the rows of built-in pipelines that have none yet; existing rows (maybe
   * disabled or reordered by an admin) stay as they are. Safe when several nodes start at once.
   */
  async ensureBuiltins(rows: readonly NewPipelineRow[]): Promise<void> {
    if (!rows.length) return;
    await this.db
      .insertInto('pipelines')
      .values([...rows])
      .onConflict((oc) => oc.column('builtin_key').doNothing())
      .execute();
  }

  insert(row: NewPipelineRow): Promise<PipelineRow> {
    return this.db.insertInto('pipelines').values(row).returningAll().executeTakeFirstOrThrow();
  }

  update(id: number, patch: PipelineUpdate): Promise<PipelineRow | undefined> {
    return this.db.updateTable('pipelines').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(id: number): Promise<boolean> {
    const res = await this.db.deleteFrom('pipelines').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}
