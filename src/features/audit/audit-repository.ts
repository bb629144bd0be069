import type { Insertable, Kysely, Selectable, SelectQueryBuilder } from 'kysely';
import type { Database } from '../../metadata/schema.js';
import type { AuditTable } from './audit-table.js';

export type AuditRow = Selectable<AuditTable>;
export type NewAuditRow = Insertable<AuditTable>;

export interface AuditFilter {
  /** A user id, or a username. */
  actor?: string | undefined;
  /** An action (`query.create`), or a family ending in a dot (`auth.`). */
  action?: string | undefined;
  /** ISO 8601 bounds on `at`: [from, to). */
  from?: string | undefined;
  to?: string | undefined;
}

/** The audit trail's records: appended, read newest first, deleted only by age. */
export class AuditRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(rows: readonly NewAuditRow[]): Promise<void> {
    if (rows.length)
      await this.db
        .insertInto('audit_events')
        .values([...rows])
        .execute();
  }

  private where<O>(q: SelectQueryBuilder<Database, 'audit_events', O>, f: AuditFilter) {
    let out = q;
    if (f.actor !== undefined)
      out = /^\d+$/.test(f.actor)
        ? out.where('user_id', '=', Number(f.actor))
        : out.where('username', '=', f.actor);
    if (f.action !== undefined)
      out = f.action.endsWith('.')
        ? out.where('action', 'like', `${f.action.replace(/[%_\\]/g, '')}%`)
        : out.where('action', '=', f.action);
    if (f.from !== undefined) out = out.where('at', '>=', f.from);
    if (f.to !== undefined) out = out.where('at', '<', f.to);
    return out;
  }

  async list(
    f: AuditFilter,
    page: { limit: number; offset: number },
  ): Promise<{ count: number; rows: AuditRow[] }> {
    const count = await this.where(
      this.db.selectFrom('audit_events').select((e) => e.fn.countAll<number>().as('n')),
      f,
    ).executeTakeFirst();
    const rows = await this.where(this.db.selectFrom('audit_events').selectAll(), f)
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    return { count: Number(count?.n ?? 0), rows };
  }

  /** Every record the filter selects, newest first, a chunk at a time (exports). */
  async *each(f: AuditFilter, chunk = 1000): AsyncGenerator<AuditRow> {
    let below: number | null = null;
    for (;;) {
      let q = this.where(this.db.selectFrom('audit_events').selectAll(), f);
      if (below !== null) q = q.where('id', '<', below);
      const rows = await q.orderBy('id', 'desc').limit(chunk).execute();
      yield* rows;
      if (rows.length < chunk) return;
      below = (rows[rows.length - 1] as AuditRow).id;
    }
  }

  /**
   * Deletes the records no signed-in user made (failed sign-ins, refused requests) but the
   * newest `keep` of them.
   */
  async deleteAnonymousBeyond(keep: number): Promise<number> {
    const edge = await this.db
      .selectFrom('audit_events')
      .select('id')
      .where('user_id', 'is', null)
      .orderBy('id', 'desc')
      .limit(1)
      .offset(keep)
      .executeTakeFirst();
    if (!edge) return 0;
    const res = await this.db
      .deleteFrom('audit_events')
      .where('user_id', 'is', null)
      .where('id', '<=', edge.id)
      .executeTakeFirst();
    return Number(res.numDeletedRows ?? 0);
  }

  async deleteBefore(at: string): Promise<number> {
    const res = await this.db.deleteFrom('audit_events').where('at', '<', at).executeTakeFirst();
    return Number(res.numDeletedRows ?? 0);
  }
}
