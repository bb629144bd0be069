import type { Generated, Kysely, Migration } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';
import { idColumn } from '../../metadata/migrations/helpers.js';

/** A saved search: a query with its range, streams, columns and sort, and who it is shared with. */
export interface SavedSearchesTable {
  id: Generated<number>;
  title: string;
  description: string;
  query: string;
  /** JSON texts. */
  filter: string;
  time_range: string;
  streams: string | null;
  columns: string;
  sort: string;
  owner: number;
  share_everyone: number;
  created_at: string;
  updated_at: string;
}

/** A team a saved search is shared with. */
export interface SavedSearchTeamsTable {
  saved_search_id: number;
  team_id: number;
}

declare module '../../metadata/schema.js' {
  interface Database {
    saved_searches: SavedSearchesTable;
    saved_search_teams: SavedSearchTeamsTable;
  }
}

export const savedSearchesMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await idColumn(db.schema.createTable('saved_searches'), dialect)
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('query', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('filter', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('time_range', 'text', (c) => c.notNull())
      .addColumn('streams', 'text')
      .addColumn('columns', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('sort', 'text', (c) => c.notNull().defaultTo('["-ts"]'))
      .addColumn('owner', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('share_everyone', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('saved_searches_owner').on('saved_searches').column('owner').execute();
    await db.schema
      .createTable('saved_search_teams')
      .addColumn('saved_search_id', 'integer', (c) =>
        c.notNull().references('saved_searches.id').onDelete('cascade'),
      )
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id').onDelete('cascade'))
      .execute();
    await db.schema
      .createIndex('saved_search_teams_search')
      .on('saved_search_teams')
      .column('saved_search_id')
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('saved_search_teams').execute();
    await db.schema.dropTable('saved_searches').execute();
  },
});
