import { type Kysely, sql } from 'kysely';
import type { Database } from '../../metadata/schema.js';
import type { PatternRow } from './patterns-table.js';

/** The miner's templates in the metadata store. */
export class PatternsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The most common templates first, at most `limit`: what a starting miner takes up again. */
  mostCommon(limit: number): Promise<PatternRow[]> {
    return this.db.selectFrom('patterns').selectAll().orderBy('count', 'desc').limit(limit).execute();
  }

  byId(id: string): Promise<PatternRow | undefined> {
    return this.db.selectFrom('patterns').selectAll().where('pattern_id', '=', id).executeTakeFirst();
  }

  byIds(ids: readonly string[]): Promise<PatternRow[]> {
    if (!ids.length) return Promise.resolve([]);
    return this.db
      .selectFrom('patterns')
      .selectAll()
      .where('pattern_id', 'in', [...ids])
      .execute();
  }

  /** Deletes the templates last seen before `ms` (event time); answers how many. */
  async deleteLastSeenBefore(ms: number): Promise<number> {
    const r = await this.db.deleteFrom('patterns').where('last_seen', '<', ms).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /**
   * Adds what was mined since the last write: new templates, and for known ones their
   * (generalised) template, the widened time span and the count added, in one statement.
   */
  async add(rows: readonly PatternRow[]): Promise<void> {
    if (!rows.length) return;
    await this.db
      .insertInto('patterns')
      .values([...rows])
      .onConflict((oc) =>
        oc.column('pattern_id').doUpdateSet({
          template: (eb) => eb.ref('excluded.template'),
          first_seen: sql<number>`CASE WHEN excluded.first_seen < patterns.first_seen THEN excluded.first_seen ELSE patterns.first_seen END`,
          last_seen: sql<number>`CASE WHEN excluded.last_seen > patterns.last_seen THEN excluded.last_seen ELSE patterns.last_seen END`,
          count: sql<number>`patterns.count + excluded.count`,
        }),
      )
      .execute();
  }
}
