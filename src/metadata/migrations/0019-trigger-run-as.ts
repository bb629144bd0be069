import { type Kysely, type Migration, sql } from 'kysely';
import type { MetadataDialect } from '../database.js';

/**
 * Whose rights a trigger runs with (docs/access.md; docs/api/triggers.md): `triggers.run_as`, the
 * user who last decided what it matches or where it sends; `channels.decided_by`, the user
 * who last set where a channel sends; `deliveries.run_as`, the user whose rights made a
 * notification (who may see its samples). Existing rows get their owner, whose rights they
 * ran with until now. A deleted user leaves null: a trigger then matches nothing.
 */
export const triggerRunAs = (_dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    for (const [table, column] of [
      ['triggers', 'run_as'],
      ['channels', 'decided_by'],
      ['deliveries', 'run_as'],
    ] as const)
      await db.schema
        .alterTable(table)
        .addColumn(column, 'integer', (c) => c.references('users.id').onDelete('set null'))
        .execute();
    await sql`update triggers set run_as = owner_id`.execute(db);
    await sql`update channels set decided_by = owner_id`.execute(db);
    await sql`update deliveries set run_as = (select t.run_as from triggers t where t.id = deliveries.trigger_id)`.execute(
      db,
    );
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('deliveries').dropColumn('run_as').execute();
    await db.schema.alterTable('channels').dropColumn('decided_by').execute();
    await db.schema.alterTable('triggers').dropColumn('run_as').execute();
  },
});
