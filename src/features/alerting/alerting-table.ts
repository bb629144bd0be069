import {
  type Generated,
  type Insertable,
  type Kysely,
  type Migration,
  type Selectable,
  sql,
  type Updateable,
} from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';
import { idColumn } from '../../metadata/migrations/helpers.js';

export interface ChannelsTable {
  id: Generated<number>;
  name: string;
  /** Its kind: one of channel-kinds/registry.ts's CHANNEL_KINDS (the API checks it, not the table). */
  type: string;
  /** JSON: the settings of its kind, as the kind's file checks them (channel-kinds/). */
  config: string;
  owner_id: number;
  /** Who last set where it sends (type and config); null once that user is deleted. */
  decided_by: number | null;
  created_at: string;
  updated_at: string;
}

export type DeliveryStatus = 'pending' | 'sent' | 'failed';

export interface DeliveriesTable {
  id: Generated<number>;
  trigger_id: number | null;
  channel_id: number;
  status: DeliveryStatus;
  attempts: number;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
  /** Epoch ms of the next attempt (pending). */
  next_attempt_at: number;
  /** Epoch ms until which a process is sending it. */
  lease_until: number;
  /** JSON: the notification. */
  payload: string;
  /** The user whose rights made it (its trigger's `run_as` then): who may see its samples. */
  run_as: Generated<number | null>;
  /**
   * A firing and its recovery share it (their trigger and group): of one channel, a
   * delivery waits while an earlier one of its key is pending (null: none waits).
   */
  sequence_key: Generated<string | null>;
  /** A scheduled report's delivery: its schedule and report (made by 0024-schedules). */
  schedule_id: Generated<number | null>;
  report_id: Generated<number | null>;
}

declare module '../../metadata/schema.js' {
  interface Database {
    channels: ChannelsTable;
    deliveries: DeliveriesTable;
  }
}

export type ChannelRow = Selectable<ChannelsTable>;
export type NewChannelRow = Insertable<ChannelsTable>;
export type ChannelUpdate = Updateable<ChannelsTable>;
export type DeliveryRow = Selectable<DeliveriesTable>;
export type NewDeliveryRow = Insertable<DeliveriesTable>;

/**
 * Alerting: a trigger's condition (every match, or a threshold over a sliding window),
 * the channels it notifies and its cooldown; the channels; and the deliveries, the
 * durable queue of notifications (a restart loses none: a pending row is sent by whichever
 * process holds its lease next).
 */
export const alertingMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('triggers')
      .addColumn('condition', 'text', (c) => c.notNull().defaultTo('{"type":"match"}'))
      .execute();
    await db.schema
      .alterTable('triggers')
      .addColumn('notify', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
    await db.schema
      .alterTable('triggers')
      .addColumn('cooldown_seconds', 'integer', (c) => c.notNull().defaultTo(300))
      .execute();

    await idColumn(db.schema.createTable('channels'), dialect)
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('config', 'text', (c) => c.notNull())
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addCheckConstraint('channels_type', sql`type in ('webhook', 'slack', 'email')`)
      .execute();
    await db.schema.createIndex('channels_owner').on('channels').column('owner_id').execute();

    await idColumn(db.schema.createTable('deliveries'), dialect)
      // A deleted trigger leaves its history; a deleted channel takes its deliveries.
      .addColumn('trigger_id', 'integer', (c) => c.references('triggers.id').onDelete('set null'))
      .addColumn('channel_id', 'integer', (c) => c.notNull().references('channels.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('sent_at', 'text')
      .addColumn('next_attempt_at', 'double precision', (c) => c.notNull())
      .addColumn('lease_until', 'double precision', (c) => c.notNull().defaultTo(0))
      .addColumn('payload', 'text', (c) => c.notNull())
      .addCheckConstraint('deliveries_status', sql`status in ('pending', 'sent', 'failed')`)
      .execute();
    await db.schema
      .createIndex('deliveries_due')
      .on('deliveries')
      .columns(['status', 'next_attempt_at'])
      .execute();
    await db.schema.createIndex('deliveries_trigger').on('deliveries').column('trigger_id').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('deliveries').execute();
    await db.schema.dropTable('channels').execute();
    await db.schema.alterTable('triggers').dropColumn('cooldown_seconds').execute();
    await db.schema.alterTable('triggers').dropColumn('notify').execute();
    await db.schema.alterTable('triggers').dropColumn('condition').execute();
  },
});

/**
 * The on-call channel kinds (`teams`, `pagerduty`, `opsgenie`): the channels' type check
 * names them; and deliveries gain `sequence_key`, so a recovery is sent after its firing.
 * SQLite cannot change a check: the table is made anew (its 12-step procedure, with
 * foreign keys off so the deliveries of the channels stay; SQLite runs migrations outside
 * a transaction).
 */
export const channelKindsMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    const check = sql`type in ('webhook', 'slack', 'email', 'teams', 'pagerduty', 'opsgenie')`;
    if (dialect === 'postgres') {
      await sql`alter table channels drop constraint channels_type`.execute(db);
      await sql`alter table channels add constraint channels_type check (${check})`.execute(db);
    } else await rebuildChannels(db, check);
    await db.schema.alterTable('deliveries').addColumn('sequence_key', 'text').execute();
    await db.schema
      .createIndex('deliveries_sequence')
      .on('deliveries')
      .columns(['sequence_key', 'channel_id'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('deliveries_sequence').execute();
    await db.schema.alterTable('deliveries').dropColumn('sequence_key').execute();
    const check = sql`type in ('webhook', 'slack', 'email')`;
    if (dialect === 'postgres') {
      await sql`alter table channels drop constraint channels_type`.execute(db);
      await sql`alter table channels add constraint channels_type check (${check})`.execute(db);
    } else await rebuildChannels(db, check);
  },
});

/**
 * Channel kinds are the API's to check (its schema), not the store's: a new kind is code
 * alone, without a migration to rebuild the table (issue 74). The kept rows are as they were.
 */
export const channelKindsUncheckedMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    if (dialect === 'postgres') await sql`alter table channels drop constraint channels_type`.execute(db);
    else await rebuildChannels(db, null);
  },
  async down(db: Kysely<unknown>) {
    const check = sql`type in ('webhook', 'slack', 'email', 'teams', 'pagerduty', 'opsgenie')`;
    if (dialect === 'postgres')
      await sql`alter table channels add constraint channels_type check (${check})`.execute(db);
    else await rebuildChannels(db, check);
  },
});

async function rebuildChannels(db: Kysely<unknown>, check: ReturnType<typeof sql> | null): Promise<void> {
  await sql`PRAGMA foreign_keys = OFF`.execute(db);
  try {
    await sql`create table channels_new (
      id integer primary key autoincrement,
      name text not null,
      type text not null,
      config text not null,
      owner_id integer not null references users(id) on delete cascade,
      created_at text not null,
      updated_at text not null,
      decided_by integer references users(id) on delete set null
      ${check ? sql`, constraint channels_type check (${check})` : sql``}
    )`.execute(db);
    await sql`insert into channels_new (id, name, type, config, owner_id, created_at, updated_at, decided_by)
      select id, name, type, config, owner_id, created_at, updated_at, decided_by from channels`.execute(db);
    await sql`drop table channels`.execute(db);
    await sql`alter table channels_new rename to channels`.execute(db);
    await sql`create index channels_owner on channels (owner_id)`.execute(db);
  } finally {
    await sql`PRAGMA foreign_keys = ON`.execute(db);
  }
}
