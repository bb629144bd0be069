import type { Kysely } from 'kysely';
import type { OrderTerm, Page, PageRequest } from '../../core/list.js';
import { paginate } from '../../metadata/paginate.js';
import type { Database } from '../../metadata/schema.js';
import type { NewTriggerMatchRow, NewTriggerRow, TriggerRow, TriggerUpdate } from './triggers-table.js';

export interface TriggerFilter {
  /** Restrict to this owner (the caller); undefined = everyone's. */
  visibleTo?: number;
  owners?: number[];
  enabled?: boolean;
}

/** One match as `GET /api/events/{ev_id}/triggers` shows it. */
export interface TriggerMatchRow {
  ev_id: string;
  trigger_id: number;
  name: string;
  severity: string;
  description: string;
  matched_at: string;
  task_id: number | null;
}

/** Rows per INSERT of matches: far below either dialect's parameter limit. */
const MATCH_ROWS_PER_INSERT = 500;
/** Event ids per lookup of matches. */
const EV_IDS_PER_LOOKUP = 1000;

const columnOf = (term: OrderTerm): OrderTerm =>
  term.field === 'owner' ? { ...term, field: 'owner_id' } : term;

export class TriggersRepository {
  constructor(private readonly db: Kysely<Database>) {}

  byId(id: number): Promise<TriggerRow | undefined> {
    return this.db.selectFrom('triggers').selectAll().where('id', '=', id).executeTakeFirst();
  }

  list(filter: TriggerFilter, page: PageRequest): Promise<Page<TriggerRow>> {
    let q = this.db.selectFrom('triggers').selectAll();
    if (filter.visibleTo !== undefined) q = q.where('owner_id', '=', filter.visibleTo);
    if (filter.owners) q = q.where('owner_id', 'in', filter.owners);
    if (filter.enabled !== undefined) q = q.where('enabled', '=', filter.enabled ? 1 : 0);
    return paginate(q, { ...page, ordering: page.ordering.map(columnOf) });
  }

  async countOwnedBy(ownerId: number): Promise<number> {
    const row = await this.db
      .selectFrom('triggers')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('owner_id', '=', ownerId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The ids and conditions of a user's enabled triggers (their pattern_rate budget). */
  enabledOwnedBy(ownerId: number): Promise<Array<{ id: number; condition: string }>> {
    return this.db
      .selectFrom('triggers')
      .select(['id', 'condition'])
      .where('owner_id', '=', ownerId)
      .where('enabled', '=', 1)
      .execute();
  }

  /**
   * The triggers that run: enabled, and neither owned nor decided by a disabled user (those
   * pause until the user is enabled again; a `lt` threshold would otherwise fire on silence).
   */
  enabled(): Promise<TriggerRow[]> {
    const disabled = this.db.selectFrom('users').select('users.id').where('users.disabled', '=', 1);
    return this.db
      .selectFrom('triggers')
      .selectAll()
      .where('enabled', '=', 1)
      .where('owner_id', 'not in', disabled)
      .where((eb) => eb.or([eb('run_as', 'is', null), eb('run_as', 'not in', disabled)]))
      .orderBy('id')
      .execute();
  }

  insert(row: NewTriggerRow): Promise<TriggerRow> {
    return this.db.insertInto('triggers').values(row).returningAll().executeTakeFirstOrThrow();
  }

  update(id: number, patch: TriggerUpdate): Promise<TriggerRow | undefined> {
    return this.db.updateTable('triggers').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
  }

  /** Deletes the trigger and its matches; the tasks it opened stay, unlinked. */
  async delete(id: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.updateTable('tasks').set({ trigger_id: null }).where('trigger_id', '=', id).execute();
      const res = await trx.deleteFrom('triggers').where('id', '=', id).executeTakeFirst();
      return Number(res.numDeletedRows) > 0;
    });
  }

  async insertMatches(rows: readonly NewTriggerMatchRow[]): Promise<void> {
    if (!rows.length) return;
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += MATCH_ROWS_PER_INSERT)
        await trx
          .insertInto('trigger_matches')
          .values(rows.slice(i, i + MATCH_ROWS_PER_INSERT))
          .execute();
    });
  }

  /** The matches of these events, oldest match first (then by trigger). */
  /** Matches of these events; with `ownerId`, only of that user's triggers. */
  async matchesOf(evIds: readonly string[], opts: { ownerId?: number } = {}): Promise<TriggerMatchRow[]> {
    const out: TriggerMatchRow[] = [];
    for (let i = 0; i < evIds.length; i += EV_IDS_PER_LOOKUP) {
      const rows = await this.db
        .selectFrom('trigger_matches as m')
        .innerJoin('triggers as t', 't.id', 'm.trigger_id')
        // A deleted task leaves its matches: they then name no task.
        .leftJoin('tasks as k', 'k.id', 'm.task_id')
        .select(['m.ev_id', 'm.trigger_id', 't.name', 't.severity', 't.description', 'm.matched_at'])
        .select('k.id as task_id')
        .where('m.ev_id', 'in', evIds.slice(i, i + EV_IDS_PER_LOOKUP))
        .$if(opts.ownerId !== undefined, (q) => q.where('t.owner_id', '=', opts.ownerId as number))
        .orderBy('m.matched_at')
        .orderBy('m.trigger_id')
        .execute();
      out.push(...rows);
    }
    return out;
  }
}
