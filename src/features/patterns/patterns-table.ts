import type { Kysely, Migration, Selectable } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';

/**
 * The templates the miner made (docs/api/patterns.md), so a template keeps its id across restarts:
 * its tokens (variables `<*>`, joined by one space), when its events happened (first and
 * last, Unix ms of event time), how many there were (all time) and one of them.
 */
export interface PatternsTable {
  pattern_id: string;
  app: string;
  template: string;
  first_seen: number;
  last_seen: number;
  count: number;
  example_ev_id: string;
}

export type PatternRow = Selectable<PatternsTable>;

declare module '../../metadata/schema.js' {
  interface Database {
    patterns: PatternsTable;
  }
}

export const patternsMigration = (_dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('patterns')
      .addColumn('pattern_id', 'text', (c) => c.primaryKey())
      .addColumn('app', 'text', (c) => c.notNull())
      .addColumn('template', 'text', (c) => c.notNull())
      .addColumn('first_seen', 'double precision', (c) => c.notNull())
      .addColumn('last_seen', 'double precision', (c) => c.notNull())
      .addColumn('count', 'double precision', (c) => c.notNull())
      .addColumn('example_ev_id', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('patterns_count').on('patterns').column('count').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('patterns').execute();
  },
});
