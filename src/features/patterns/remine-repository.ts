import { type Kysely, sql, type Updateable } from 'kysely';
import type { Database } from '../../metadata/schema.js';
import type { PatternsTable } from './patterns-table.js';
import type { PatternReminesTable, RemineRow } from './remine-table.js';

/** What the store holds of a pattern after a re-mine: its events' span (ms) and count. */
export interface StoredSpan {
  firstSeen: number;
  lastSeen: number;
  count: number;
}

/** Re-mining jobs, and the corrections a re-mine makes to the templates table. */
export class RemineRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: RemineRow): Promise<void> {
    await this.db.insertInto('pattern_remines').values(row).execute();
  }

  byId(id: string): Promise<RemineRow | undefined> {
    return this.db.selectFrom('pattern_remines').selectAll().where('job_id', '=', id).executeTakeFirst();
  }

  running(): Promise<RemineRow[]> {
    return this.db.selectFrom('pattern_remines').selectAll().where('state', '=', 'running').execute();
  }

  /** Writes a running job's figures or its end; false when it is no longer running (ended elsewhere). */
  async update(id: string, patch: Updateable<PatternReminesTable>): Promise<boolean> {
    const r = await this.db
      .updateTable('pattern_remines')
      .set(patch)
      .where('job_id', '=', id)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async requestStop(id: string): Promise<void> {
    await this.db
      .updateTable('pattern_remines')
      .set({ stop_requested: 1 })
      .where('job_id', '=', id)
      .where('state', '=', 'running')
      .execute();
  }

  /**
   * Marks failed ("interrupted") the running jobs whose runner stopped renewing before
   * `now`, or every running job (`now` undefined: this process is the only one that runs them).
   */
  async interrupt(finished: string, now?: number): Promise<void> {
    let q = this.db
      .updateTable('pattern_remines')
      .set({ state: 'failed', error: 'interrupted', finished })
      .where('state', '=', 'running');
    if (now !== undefined) q = q.where('lease_until', '<', now);
    await q.execute();
  }

  /**
   * Takes `n` events off each template's count: the events a re-mine read (the miner counted
   * them again under the id they have now, which for most is the one they had).
   */
  async subtract(counts: ReadonlyMap<string, number>): Promise<void> {
    for (const [id, n] of counts)
      await this.db
        .updateTable('patterns')
        .set({ count: sql<number>`${sql.ref('count')} - ${n}` })
        .where('pattern_id', '=', id)
        .execute();
  }

  /**
   * A template some events left: deleted when the store holds none of its events any more
   * (`stored` undefined); otherwise its count is at least what the store holds and its span
   * shrinks to the store's where the re-mined range [fromMs, toMs) held its first or last event.
   */
  async settle(id: string, stored: StoredSpan | undefined, fromMs: number, toMs: number): Promise<void> {
    if (!stored) {
      await this.db.deleteFrom('patterns').where('pattern_id', '=', id).execute();
      return;
    }
    const row = await this.db
      .selectFrom('patterns')
      .selectAll()
      .where('pattern_id', '=', id)
      .executeTakeFirst();
    if (!row) return;
    const patch: Updateable<PatternsTable> = { count: Math.max(row.count, stored.count) };
    if (row.first_seen >= fromMs) patch.first_seen = stored.firstSeen;
    if (row.last_seen < toMs) patch.last_seen = stored.lastSeen;
    await this.db.updateTable('patterns').set(patch).where('pattern_id', '=', id).execute();
  }
}
