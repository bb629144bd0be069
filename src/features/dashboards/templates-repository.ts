import type { Kysely } from 'kysely';
import type { Database } from '../../metadata/schema.js';
import type { TemplateRow } from './dashboards-table.js';

export class DashboardTemplatesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  byPath(path: string): Promise<TemplateRow | undefined> {
    return this.db.selectFrom('dashboard_templates').selectAll().where('path', '=', path).executeTakeFirst();
  }

  all(): Promise<TemplateRow[]> {
    return this.db.selectFrom('dashboard_templates').selectAll().orderBy('path').execute();
  }

  /**
   * Inserts a template, or overwrites the one at its path when `overwriteOwnedBy` is
   * undefined (anyone's) or owns it. Answers undefined when the path is taken by someone
   * else; one statement, so two savers racing cannot both win.
   */
  save(row: TemplateRow, overwriteOwnedBy: number | undefined): Promise<TemplateRow | undefined> {
    return this.db
      .insertInto('dashboard_templates')
      .values(row)
      .onConflict((oc) => {
        const update = oc.column('path').doUpdateSet({ definition: row.definition });
        return overwriteOwnedBy === undefined
          ? update
          : update.where('dashboard_templates.owner_id', '=', overwriteOwnedBy);
      })
      .returningAll()
      .executeTakeFirst();
  }
}
