import { type Kysely, sql } from 'kysely';
import type { Page, PageRequest } from '../../core/list.js';
import { paginate } from '../../metadata/paginate.js';
import type { Database } from '../../metadata/schema.js';
import type { NewScheduleRow, ScheduleRow, ScheduleUpdate } from './schedules-table.js';

export interface ScheduleFilter {
  /** Only these owners' (undefined: everyone's). */
  owners?: readonly number[] | undefined;
  name?: string | undefined;
  enabled?: boolean | undefined;
}

export class SchedulesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  insert(row: NewScheduleRow): Promise<ScheduleRow> {
    return this.db.insertInto('schedules').values(row).returningAll().executeTakeFirstOrThrow();
  }

  byId(id: number): Promise<ScheduleRow | undefined> {
    return this.db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirst();
  }

  list(filter: ScheduleFilter, page: PageRequest): Promise<Page<ScheduleRow>> {
    let q = this.db.selectFrom('schedules').selectAll();
    if (filter.owners) q = q.where('owner_id', 'in', filter.owners.length ? [...filter.owners] : [-1]);
    if (filter.name)
      q = q.where(sql<boolean>`lower(name) like lower(${likeContains(filter.name)}) escape '!'`);
    if (filter.enabled !== undefined) q = q.where('enabled', '=', filter.enabled ? 1 : 0);
    return paginate(q, page);
  }

  async countOf(ownerId: number): Promise<number> {
    const row = await this.db
      .selectFrom('schedules')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('owner_id', '=', ownerId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  update(id: number, patch: ScheduleUpdate): Promise<ScheduleRow | undefined> {
    return this.db.updateTable('schedules').set(patch).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(id: number): Promise<boolean> {
    const res = await this.db.deleteFrom('schedules').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** Enabled schedules whose next slot is at or before `now`. */
  due(now: number): Promise<ScheduleRow[]> {
    return this.db
      .selectFrom('schedules')
      .selectAll()
      .where('enabled', '=', 1)
      .where('next_run_at', '<=', now)
      .orderBy('next_run_at')
      .limit(100)
      .execute();
  }

  /**
   * Moves a schedule's next slot from `from` to `to`, only if it still is `from` (another
   * node, or a change of its cron, may have moved it): answers whether it moved.
   */
  async advance(id: number, from: number, to: number | null): Promise<boolean> {
    const res = await this.db
      .updateTable('schedules')
      .set({ next_run_at: to })
      .where('id', '=', id)
      .where('next_run_at', '=', from)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Claims slot `slotAt` of a schedule for `node`: false when another already has it. */
  async claim(scheduleId: number, slotAt: number, node: string): Promise<boolean> {
    const res = await this.db
      .insertInto('schedule_runs')
      .values({ schedule_id: scheduleId, slot_at: slotAt, node, claimed_at: new Date().toISOString() })
      .onConflict((oc) => oc.columns(['schedule_id', 'slot_at']).doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  /** Forgets claims older than `before` (epoch ms): a slot is claimed once, then never looked at again. */
  async forgetClaims(before: number): Promise<void> {
    await this.db.deleteFrom('schedule_runs').where('slot_at', '<', before).execute();
  }

  /**
   * Sets a run's record: `expectRunning` false only starts one when none is running (two
   * presses of Run, or a cron slot during a manual run); answers whether it was set.
   */
  async setLastRun(
    id: number,
    lastRun: string,
    onlyIfNotRunning = false,
    lease?: { node: string; until: number },
  ): Promise<boolean> {
    let q = this.db
      .updateTable('schedules')
      .set({ last_run: lastRun, ...(lease ? { run_node: lease.node, run_lease_until: lease.until } : {}) })
      .where('id', '=', id);
    if (onlyIfNotRunning)
      q = q.where((eb) =>
        eb.or([eb('last_run', 'is', null), eb('last_run', 'not like', '%"status":"running"%')]),
      );
    const res = await q.executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  /** Extends the leases of the runs `node` is running (cluster). */
  async renewRuns(node: string, until: number): Promise<void> {
    await this.db
      .updateTable('schedules')
      .set({ run_lease_until: until })
      .where('run_node', '=', node)
      .where('last_run', 'like', '%"status":"running"%')
      .execute();
  }

  /**
   * Takes a run whose node's lease ran out for `node` (cluster); the update re-checks the
   * lease, so two nodes never take the same run.
   */
  async adoptRun(node: string, now: number, until: number): Promise<ScheduleRow | undefined> {
    const candidate = await this.db
      .selectFrom('schedules')
      .select('id')
      .where('last_run', 'like', '%"status":"running"%')
      .where('run_lease_until', '<', now)
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    if (!candidate) return undefined;
    return this.db
      .updateTable('schedules')
      .set({ run_node: node, run_lease_until: until })
      .where('id', '=', candidate.id)
      .where('run_lease_until', '<', now)
      .returningAll()
      .executeTakeFirst();
  }

  /** Schedules whose last run is still marked running (at start: left by a stopped process). */
  running(): Promise<ScheduleRow[]> {
    return this.db
      .selectFrom('schedules')
      .selectAll()
      .where('last_run', 'like', '%"status":"running"%')
      .execute();
  }

  /** How many schedules are enabled and disabled (for /metrics). */
  async countByEnabled(): Promise<{ true: number; false: number }> {
    const rows = await this.db
      .selectFrom('schedules')
      .select(['enabled', (eb) => eb.fn.countAll<string | number>().as('n')])
      .groupBy('enabled')
      .execute();
    const out = { true: 0, false: 0 };
    for (const r of rows) out[r.enabled ? 'true' : 'false'] += Number(r.n);
    return out;
  }
}

/** `%`, `_` and the escape character itself match literally in a LIKE pattern. */
const likeContains = (text: string) => `%${text.replace(/[!%_]/g, '!$&')}%`;
