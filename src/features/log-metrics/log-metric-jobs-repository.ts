import type { Insertable, Kysely, Updateable } from 'kysely';
import type { Database } from '../../metadata/schema.js';
import type { LogMetricJobRow, LogMetricJobsTable } from './log-metric-jobs-table.js';

/** Backfill jobs' rows (a metric's go with it: the foreign key cascades). */
export class LogMetricJobsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * A new RUNNING job for the metric, unless one runs already (null), both decided in one
   * transaction.
   */
  start(row: Insertable<LogMetricJobsTable>): Promise<LogMetricJobRow | null> {
    return this.db.transaction().execute(async (trx) => {
      const running = await trx
        .selectFrom('log_metric_jobs')
        .select('id')
        .where('metric_id', '=', row.metric_id)
        .where('status', '=', 'RUNNING')
        .executeTakeFirst();
      if (running) return null;
      return trx.insertInto('log_metric_jobs').values(row).returningAll().executeTakeFirstOrThrow();
    });
  }

  byId(id: number): Promise<LogMetricJobRow | undefined> {
    return this.db.selectFrom('log_metric_jobs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Changes a RUNNING job (false: it is gone, or ended). */
  async update(id: number, change: Updateable<LogMetricJobsTable>): Promise<boolean> {
    const r = await this.db
      .updateTable('log_metric_jobs')
      .set(change)
      .where('id', '=', id)
      .where('status', '=', 'RUNNING')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Jobs a process that ended left RUNNING end as ERROR. */
  async interrupt(now: string): Promise<void> {
    await this.db
      .updateTable('log_metric_jobs')
      .set({ status: 'ERROR', error: 'interrupted: the server stopped while it ran', finished_at: now })
      .where('status', '=', 'RUNNING')
      .execute();
  }
}
