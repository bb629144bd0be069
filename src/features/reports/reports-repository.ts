import type { Kysely } from 'kysely';
import type { PageRequest } from '../../core/list.js';
import { paginate } from '../../metadata/paginate.js';
import type { Database } from '../../metadata/schema.js';
import type { NewReportRow, ReportRow } from './reports-table.js';

export class ReportsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  insert(row: NewReportRow): Promise<ReportRow> {
    return this.db.insertInto('reports').values(row).returningAll().executeTakeFirstOrThrow();
  }

  byId(id: number): Promise<ReportRow | undefined> {
    return this.db.selectFrom('reports').selectAll().where('id', '=', id).executeTakeFirst();
  }

  list(ownerId: number | undefined, page: PageRequest, scheduleId?: number) {
    let q = this.db.selectFrom('reports').selectAll();
    if (ownerId !== undefined) q = q.where('owner_id', '=', ownerId);
    if (scheduleId !== undefined) q = q.where('schedule_id', '=', scheduleId);
    return paginate(q, page);
  }

  async finish(
    id: number,
    patch: { status: 'READY' | 'ERROR'; size?: number; error?: string | null },
  ): Promise<void> {
    await this.db.updateTable('reports').set(patch).where('id', '=', id).execute();
  }

  /** A schedule's reports but its newest `keep` (by id: made in run order). */
  olderOfSchedule(scheduleId: number, keep: number): Promise<ReportRow[]> {
    return this.db
      .selectFrom('reports')
      .selectAll()
      .where('schedule_id', '=', scheduleId)
      .orderBy('id', 'desc')
      .offset(keep)
      .limit(1_000_000)
      .execute();
  }

  async delete(id: number): Promise<void> {
    await this.db.deleteFrom('reports').where('id', '=', id).execute();
  }

  /** How many reports there are of each status (for /metrics). */
  async countByStatus(): Promise<Record<ReportRow['status'], number>> {
    const rows = await this.db
      .selectFrom('reports')
      .select(['status', (eb) => eb.fn.countAll<number | string | bigint>().as('n')])
      .groupBy('status')
      .execute();
    const counts = { PENDING: 0, READY: 0, ERROR: 0 };
    for (const r of rows) counts[r.status] = Number(r.n);
    return counts;
  }

  /** Reports still PENDING (at start: left by a process that stopped). */
  pending(): Promise<ReportRow[]> {
    return this.db.selectFrom('reports').selectAll().where('status', '=', 'PENDING').execute();
  }

  /** Extends the leases of the PENDING reports `node` generates or has queued (cluster). */
  async renew(node: string, until: number): Promise<void> {
    await this.db
      .updateTable('reports')
      .set({ lease_until: until })
      .where('owner_node', '=', node)
      .where('status', '=', 'PENDING')
      .execute();
  }

  /**
   * Takes the oldest PENDING report whose node's lease expired for `node` (cluster); the
   * update re-checks the lease, so two nodes never take the same report.
   */
  async adoptExpired(node: string, until: number): Promise<ReportRow | undefined> {
    const now = Date.now();
    const candidate = await this.db
      .selectFrom('reports')
      .select('id')
      .where('status', '=', 'PENDING')
      .where('lease_until', '<', now)
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    if (!candidate) return undefined;
    return this.db
      .updateTable('reports')
      .set({ owner_node: node, lease_until: until })
      .where('id', '=', candidate.id)
      .where('status', '=', 'PENDING')
      .where('lease_until', '<', now)
      .returningAll()
      .executeTakeFirst();
  }

  /** Reports left PENDING by a process that stopped: they will never finish. */
  async failPending(message: string): Promise<void> {
    await this.db
      .updateTable('reports')
      .set({ status: 'ERROR', error: message })
      .where('status', '=', 'PENDING')
      .execute();
  }
}
