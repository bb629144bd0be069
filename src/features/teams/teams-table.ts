import type { Generated, Kysely, Migration } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';
import { idColumn } from '../../metadata/migrations/helpers.js';

/** A team; the built-in `everyone` (`builtin` 1) has no member rows: it holds every user. */
export interface TeamsTable {
  id: Generated<number>;
  name: string;
  builtin: number;
  created_at: string;
  /**
   * 1: single sign-on manages its members (a provider group of the same name, ignoring
   * case, decides them at each sign-in); 0: only admins do.
   */
  provider_synced: Generated<number>;
}

export interface TeamMembersTable {
  team_id: number;
  user_id: number;
}

declare module '../../metadata/schema.js' {
  interface Database {
    teams: TeamsTable;
    team_members: TeamMembersTable;
  }
}

/** The name of the built-in team of every user. */
export const EVERYONE = 'everyone';

/** Teams, their members (dropped with their team or user) and the built-in `everyone`. */
export const teamsMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await idColumn(db.schema.createTable('teams'), dialect)
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('builtin', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('team_members')
      .addColumn('team_id', 'integer', (c) => c.notNull().references('teams.id').onDelete('cascade'))
      .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addPrimaryKeyConstraint('team_members_pk', ['team_id', 'user_id'])
      .execute();
    await db.schema.createIndex('team_members_user').on('team_members').column('user_id').execute();
    await (db as Kysely<{ teams: { name: string; builtin: number; created_at: string } }>)
      .insertInto('teams')
      .values({ name: EVERYONE, builtin: 1, created_at: new Date().toISOString() })
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('team_members').execute();
    await db.schema.dropTable('teams').execute();
  },
});

/**
 * `teams.provider_synced`: a provider group joins a team of its name only when the team is
 * marked so (teams made before it are not: an admin marks those the provider should manage).
 */
export const teamsProviderSyncedMigration = (_dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('teams')
      .addColumn('provider_synced', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('teams').dropColumn('provider_synced').execute();
  },
});
