import type { Generated, Kysely, Migration } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';
import { idColumn } from '../../metadata/migrations/helpers.js';

/** A stream: the events its rule matches (the built-in Default: what no other rule matches). */
export interface StreamsTable {
  id: Generated<number>;
  title: string;
  description: string;
  /** Query-language text; null for the built-in Default. */
  rule: string | null;
  /** Null: the global `retentionDays`; 0 keeps its events forever. */
  retention_days: number | null;
  /** Days its events stay in the hot store before the cold tier (§24); null: never move. */
  hot_days: number | null;
  owner: number | null;
  builtin: number;
  created_at: string;
  updated_at: string;
}

/** One reader of a stream: a team or a user (dropped with them). */
export interface StreamReadersTable {
  stream_id: number;
  team_id: number | null;
  user_id: number | null;
}

declare module '../../metadata/schema.js' {
  interface Database {
    streams: StreamsTable;
    stream_readers: StreamReadersTable;
  }
}

/** The title of the built-in stream. */
export const DEFAULT_STREAM = 'Default';

/** Streams, their readers and the built-in Default, read by the team `everyone`. */
export const streamsMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await idColumn(db.schema.createTable('streams'), dialect)
      .addColumn('title', 'text', (c) => c.notNull().unique())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('rule', 'text')
      .addColumn('retention_days', 'integer')
      .addColumn('owner', 'integer', (c) => c.references('users.id').onDelete('set null'))
      .addColumn('builtin', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('stream_readers')
      .addColumn('stream_id', 'integer', (c) => c.notNull().references('streams.id').onDelete('cascade'))
      .addColumn('team_id', 'integer', (c) => c.references('teams.id').onDelete('cascade'))
      .addColumn('user_id', 'integer', (c) => c.references('users.id').onDelete('cascade'))
      .execute();
    await db.schema.createIndex('stream_readers_stream').on('stream_readers').column('stream_id').execute();
    const typed = db as Kysely<{
      streams: StreamsTable;
      stream_readers: StreamReadersTable;
      teams: { id: number; builtin: number };
    }>;
    const now = new Date().toISOString();
    const stream = await typed
      .insertInto('streams')
      .values({
        title: DEFAULT_STREAM,
        description: 'Every event that no other stream claims.',
        rule: null,
        retention_days: null,
        owner: null,
        builtin: 1,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const everyone = await typed.selectFrom('teams').select('id').where('builtin', '=', 1).executeTakeFirst();
    if (everyone)
      await typed
        .insertInto('stream_readers')
        .values({ stream_id: stream.id, team_id: everyone.id, user_id: null })
        .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('stream_readers').execute();
    await db.schema.dropTable('streams').execute();
  },
});

/** Streams gain `hot_days` (the cold tier's per-stream setting); null (never move) for all. */
export const streamHotDaysMigration = (_dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('streams').addColumn('hot_days', 'integer').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('streams').dropColumn('hot_days').execute();
  },
});
