import { type Kysely, sql } from 'kysely';
import type { Database } from '../../metadata/schema.js';
import type { PatternRow } from './patterns-table.js';

/** A template merged into another (`from` into `to`, whose text is `template`). */
export interface MergedRow {
  from: string;
  to: string;
  template: string;
}

/** Rows a statement of `add` writes: 7 parameters each, within SQLite's and PostgreSQL's limits. */
const ADD_ROWS = 1000;

/**
 * Text as the metadata store holds it: PostgreSQL's text cannot hold NUL, so a template
 * (or app) made from binary garbage shows it as U+FFFD, the same on every store; one such
 * row failed every write of templates after it.
 */
const storable = (text: string) => (text.includes('\u0000') ? text.replaceAll('\u0000', '\ufffd') : text);

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

  /** The rows of these ids, read 500 at a time (a Patterns query may name thousands). */
  async byIds(ids: readonly string[]): Promise<PatternRow[]> {
    const out: PatternRow[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      out.push(
        ...(await this.db
          .selectFrom('patterns')
          .selectAll()
          .where('pattern_id', 'in', ids.slice(i, i + 500))
          .execute()),
      );
    }
    return out;
  }

  /** The rows whose template is one of these texts (every app's), read 500 texts at a time. */
  async byTemplates(texts: readonly string[]): Promise<PatternRow[]> {
    const out: PatternRow[] = [];
    for (let i = 0; i < texts.length; i += 500) {
      out.push(
        ...(await this.db
          .selectFrom('patterns')
          .selectAll()
          .where('template', 'in', texts.slice(i, i + 500))
          .execute()),
      );
    }
    return out;
  }

  /** Deletes the templates last seen before `ms` (event time); answers how many. */
  async deleteLastSeenBefore(ms: number): Promise<number> {
    const r = await this.db.deleteFrom('patterns').where('last_seen', '<', ms).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /**
   * Adds what was mined since the last write: new templates, and for known ones their
   * (generalised) template, the widened time span and the count added, in one transaction
   * of statements of at most `ADD_ROWS` rows (a second of messages each new to the miner
   * made one statement of more parameters than SQLite takes, 32,766: it failed every
   * second and no template was written).
   */
  async add(rows: readonly PatternRow[]): Promise<void> {
    if (!rows.length) return;
    await this.db.transaction().execute(async (tx) => {
      for (let i = 0; i < rows.length; i += ADD_ROWS)
        await tx
          .insertInto('patterns')
          .values(
            rows
              .slice(i, i + ADD_ROWS)
              .map((r) => ({ ...r, app: storable(r.app), template: storable(r.template) })),
          )
          .onConflict((oc) =>
            oc.column('pattern_id').doUpdateSet({
              template: (eb) => eb.ref('excluded.template'),
              first_seen: sql<number>`CASE WHEN excluded.first_seen < patterns.first_seen THEN excluded.first_seen ELSE patterns.first_seen END`,
              last_seen: sql<number>`CASE WHEN excluded.last_seen > patterns.last_seen THEN excluded.last_seen ELSE patterns.last_seen END`,
              count: sql<number>`patterns.count + excluded.count`,
            }),
          )
          .execute();
    });
  }

  /**
   * Merged templates' rows go into the rows they were merged into: counts added, spans
   * widened, the merged rows deleted (a row merged into one not written yet takes its id
   * and text). Answers the span of the merged rows' events, or null when none was kept.
   */
  async mergeInto(merged: readonly MergedRow[]): Promise<{ fromMs: number; toMs: number } | null> {
    const rows = await this.byIds(merged.map((m) => m.from));
    if (!rows.length) return null;
    const into = new Map(merged.map((m) => [m.from, m]));
    await this.db.transaction().execute(async (tx) => {
      for (const r of rows) {
        const m = into.get(r.pattern_id);
        if (!m) continue;
        const widened = await tx
          .updateTable('patterns')
          .set({
            count: sql<number>`count + ${r.count}`,
            first_seen: sql<number>`CASE WHEN first_seen > ${r.first_seen} THEN ${r.first_seen} ELSE first_seen END`,
            last_seen: sql<number>`CASE WHEN last_seen < ${r.last_seen} THEN ${r.last_seen} ELSE last_seen END`,
          })
          .where('pattern_id', '=', m.to)
          .executeTakeFirst();
        if (Number(widened.numUpdatedRows) > 0)
          await tx.deleteFrom('patterns').where('pattern_id', '=', r.pattern_id).execute();
        else
          await tx
            .updateTable('patterns')
            .set({ pattern_id: m.to, template: storable(m.template) })
            .where('pattern_id', '=', r.pattern_id)
            .execute();
      }
    });
    let fromMs = Number.POSITIVE_INFINITY;
    let toMs = Number.NEGATIVE_INFINITY;
    for (const r of rows) {
      fromMs = Math.min(fromMs, r.first_seen);
      toMs = Math.max(toMs, r.last_seen + 1);
    }
    return { fromMs, toMs };
  }
}
