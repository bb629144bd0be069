import type { Kysely } from 'kysely';
import type { Page, PageRequest } from '../../core/list.js';
import { paginate } from '../../metadata/paginate.js';
import type { Database } from '../../metadata/schema.js';
import type { DeliveryRow, DeliveryStatus, NewDeliveryRow } from './alerting-table.js';

export interface DeliveryFilter {
  triggerId?: number;
  scheduleId?: number;
  channelId?: number;
  status?: DeliveryStatus;
  /** Only deliveries of this user's triggers or channels. */
  visibleTo?: number;
}

/** Rows per INSERT: far below either dialect's parameter limit. */
const ROWS_PER_INSERT = 200;

export class DeliveriesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(rows: readonly NewDeliveryRow[]): Promise<void> {
    if (!rows.length) return;
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += ROWS_PER_INSERT)
        await trx
          .insertInto('deliveries')
          .values(rows.slice(i, i + ROWS_PER_INSERT))
          .execute();
    });
  }

  /** Inserts one row and answers its id. */
  async insertOne(row: NewDeliveryRow): Promise<number> {
    const made = await this.db.insertInto('deliveries').values(row).returning('id').executeTakeFirstOrThrow();
    return made.id;
  }

  /** The status and attempts of these deliveries. */
  statusOf(
    ids: readonly number[],
  ): Promise<Pick<DeliveryRow, 'id' | 'status' | 'attempts' | 'last_error'>[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.db
      .selectFrom('deliveries')
      .select(['id', 'status', 'attempts', 'last_error'])
      .where('id', 'in', [...ids])
      .execute();
  }

  byId(id: number): Promise<DeliveryRow | undefined> {
    return this.db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The deliveries with their channel's type (a deleted channel takes its deliveries). */
  list(filter: DeliveryFilter, page: PageRequest): Promise<Page<DeliveryRow & { channel_type: string }>> {
    let q = this.db
      .selectFrom('deliveries')
      .selectAll()
      .select((eb) =>
        eb
          .selectFrom('channels')
          .select('channels.type')
          .whereRef('channels.id', '=', 'deliveries.channel_id')
          .$asScalar()
          .$notNull()
          .as('channel_type'),
      );
    if (filter.triggerId !== undefined) q = q.where('trigger_id', '=', filter.triggerId);
    if (filter.scheduleId !== undefined) q = q.where('schedule_id', '=', filter.scheduleId);
    if (filter.channelId !== undefined) q = q.where('channel_id', '=', filter.channelId);
    if (filter.status !== undefined) q = q.where('status', '=', filter.status);
    if (filter.visibleTo !== undefined) {
      const user = filter.visibleTo;
      q = q.where((eb) =>
        eb.or([
          eb('trigger_id', 'in', eb.selectFrom('triggers').select('id').where('owner_id', '=', user)),
          eb('channel_id', 'in', eb.selectFrom('channels').select('id').where('owner_id', '=', user)),
          eb('schedule_id', 'in', eb.selectFrom('schedules').select('id').where('owner_id', '=', user)),
        ]),
      );
    }
    return paginate(q, page);
  }

  /**
   * Takes up to `limit` pending deliveries that are due and not being sent by anyone,
   * holding each for `leaseMs`. Each row is taken by one conditional update, so two
   * processes never send the same row at the same time. A delivery waits while an earlier
   * one of its channel and `sequence_key` is pending (a recovery after its firing).
   */
  async claimDue(now: number, leaseMs: number, limit: number): Promise<DeliveryRow[]> {
    const due = await this.db
      .selectFrom('deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .where('lease_until', '<', now)
      .where((eb) =>
        eb.or([
          eb('sequence_key', 'is', null),
          eb.not(
            eb.exists(
              eb
                .selectFrom('deliveries as earlier')
                .select('earlier.id')
                .whereRef('earlier.sequence_key', '=', 'deliveries.sequence_key')
                .whereRef('earlier.channel_id', '=', 'deliveries.channel_id')
                .whereRef('earlier.id', '<', 'deliveries.id')
                .where('earlier.status', '=', 'pending'),
            ),
          ),
        ]),
      )
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute();
    const claimed: DeliveryRow[] = [];
    for (const { id } of due) {
      const row = await this.db
        .updateTable('deliveries')
        .set({ lease_until: now + leaseMs })
        .where('id', '=', id)
        .where('status', '=', 'pending')
        .where('lease_until', '<', now)
        .returningAll()
        .executeTakeFirst();
      if (row) claimed.push(row);
    }
    return claimed;
  }

  /**
   * Gives up the pending deliveries of a channel but those made with `keepRunAs`'s rights
   * (its destination changed: they must not go where the new decider chose).
   */
  async giveUpPending(channelId: number, keepRunAs: number, error: string): Promise<void> {
    await this.db
      .updateTable('deliveries')
      .set({ status: 'failed', last_error: error, lease_until: 0 })
      .where('channel_id', '=', channelId)
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('run_as', 'is', null), eb('run_as', '!=', keepRunAs)]))
      .execute();
  }

  /** Lets go of every lease (one server: nobody else can be sending). */
  async releaseAll(): Promise<void> {
    await this.db.updateTable('deliveries').set({ lease_until: 0 }).where('status', '=', 'pending').execute();
  }

  async sent(id: number, attempts: number, at: string): Promise<void> {
    await this.db
      .updateTable('deliveries')
      .set({ status: 'sent', attempts, sent_at: at, last_error: null, lease_until: 0 })
      .where('id', '=', id)
      .execute();
  }

  async retry(id: number, attempts: number, error: string, nextAt: number): Promise<void> {
    await this.db
      .updateTable('deliveries')
      .set({ attempts, last_error: error, next_attempt_at: nextAt, lease_until: 0 })
      .where('id', '=', id)
      .execute();
  }

  async failed(id: number, attempts: number, error: string): Promise<void> {
    await this.db
      .updateTable('deliveries')
      .set({ status: 'failed', attempts, last_error: error, lease_until: 0 })
      .where('id', '=', id)
      .execute();
  }

  async counts(): Promise<Record<DeliveryStatus, number>> {
    const rows = await this.db
      .selectFrom('deliveries')
      .select(['status', (eb) => eb.fn.countAll<string | number>().as('n')])
      .groupBy('status')
      .execute();
    const out: Record<DeliveryStatus, number> = { pending: 0, sent: 0, failed: 0 };
    for (const r of rows) out[r.status] = Number(r.n);
    return out;
  }
}
