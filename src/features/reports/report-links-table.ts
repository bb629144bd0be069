import type { Generated, Kysely, Migration, Selectable } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';
import { idColumn } from '../../metadata/migrations/helpers.js';

/**
 * Every link to a report's file that was handed out (ADR 0034): a link is valid only while its
 * record is, so each can be revoked on its own. A link is known by its report and expiry
 * (the URL carries both, signed), so one report's links never share an expiry second.
 */
export interface ReportLinksTable {
  id: Generated<number>;
  report_id: number;
  /** Unix seconds: the `exp` of the URL. */
  exp: number;
  created_at: string;
  /** Who asked for it (null: a scheduled delivery, or a deleted user). */
  created_by: number | null;
  /** The scheduled report's delivery it was made for (null: asked for). */
  delivery_id: number | null;
  revoked_at: string | null;
}

declare module '../../metadata/schema.js' {
  interface Database {
    report_links: ReportLinksTable;
  }
}

export type ReportLinkRow = Selectable<ReportLinksTable>;

/**
 * Link records; and deliveries' payloads without their links. A link a delivery carried is
 * recorded (its recipients have it); one made by `POST /api/reports/{id}/link` before
 * was never kept and stops working (docs/api/schedules.md).
 */
export const reportLinkRecordsMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await idColumn(db.schema.createTable('report_links'), dialect)
      .addColumn('report_id', 'integer', (c) => c.notNull().references('reports.id').onDelete('cascade'))
      .addColumn('exp', 'double precision', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by', 'integer', (c) => c.references('users.id').onDelete('set null'))
      .addColumn('delivery_id', 'integer')
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema
      .createIndex('report_links_report_exp')
      .unique()
      .on('report_links')
      .columns(['report_id', 'exp'])
      .execute();
    await db.schema.createIndex('report_links_delivery').on('report_links').column('delivery_id').execute();
    const k = db as Kysely<{
      deliveries: { id: number; report_id: number | null; payload: string; created_at: string };
      reports: { id: number };
      report_links: Omit<ReportLinksTable, 'id'>;
    }>;
    const rows = await k
      .selectFrom('deliveries')
      .select(['id', 'report_id', 'payload', 'created_at'])
      .where('report_id', 'is not', null)
      .execute();
    const reports = new Set((await k.selectFrom('reports').select('id').execute()).map((r) => r.id));
    for (const row of rows) {
      const { link, link_expires_at: _exp, ...rest } = JSON.parse(row.payload) as Record<string, unknown>;
      const exp = typeof link === 'string' ? Number(/[?&]exp=(\d+)/.exec(link)?.[1]) : Number.NaN;
      if (row.report_id !== null && reports.has(row.report_id) && Number.isFinite(exp))
        await k
          .insertInto('report_links')
          .values({
            report_id: row.report_id,
            exp,
            created_at: row.created_at,
            created_by: null,
            delivery_id: row.id,
            revoked_at: null,
          })
          .onConflict((oc) => oc.columns(['report_id', 'exp']).doNothing())
          .execute();
      await k
        .updateTable('deliveries')
        .set({ payload: JSON.stringify(rest) })
        .where('id', '=', row.id)
        .execute();
    }
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('report_links').execute();
  },
});
