/**
 * The migration that lets channels be of the on-call kinds changes the channels' type
 * check (on SQLite by making the table anew): a store migrated with channels and their
 * deliveries keeps both, and takes the new kinds but no unknown one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { COMPONENTS } from '../../../src/features/index.js';
import { migrationsOf } from '../../../src/features/root.js';
import { type MetadataDb, openMetadataDb } from '../../../src/metadata/database.js';
import { METADATA_BACKENDS } from '../../helpers/metadata.js';

/**
 * Runs `test` on a store of its own (a temp dir; a PostgreSQL schema made for it), then
 * removes it. `open(before)` opens it with the migrations named before `before` (all without).
 */
async function inFreshStore(
  url: string,
  test: (open: (before?: string) => Promise<MetadataDb>) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'logscope-kinds-'));
  const schema = `kinds_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const onPostgres = async (statement: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(statement);
    await client.end();
  };
  if (url) await onPostgres(`create schema ${schema}`);
  const all = migrationsOf(COMPONENTS);
  try {
    await test((before) =>
      openMetadataDb({
        databaseUrl: url,
        dataDir: dir,
        migrations: Object.fromEntries(Object.entries(all).filter(([name]) => !before || name < before)),
        ...(url ? { pgSchema: schema } : {}),
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (url) await onPostgres(`drop schema if exists ${schema} cascade`);
  }
}

describe.each(METADATA_BACKENDS)('the channel kinds migration on $name', ({ url }) => {
  it('keeps channels and their deliveries, and takes the new kinds', async () => {
    await inFreshStore(url, async (open) => {
      const before = await open('0022-channel-kinds');
      const now = new Date().toISOString();
      await sql`insert into users (username, created_at) values ('ann', ${now})`.execute(before.db);
      const user = (await sql<{ id: number }>`select id from users`.execute(before.db)).rows[0]?.id;
      await sql`insert into channels (name, type, config, owner_id, created_at, updated_at, decided_by)
        values ('hook', 'webhook', '{"url":"http://127.0.0.1:9/"}', ${user}, ${now}, ${now}, ${user})`.execute(
        before.db,
      );
      await expect(
        sql`insert into channels (name, type, config, owner_id, created_at, updated_at)
          values ('pd', 'pagerduty', '{}', ${user}, ${now}, ${now})`.execute(before.db),
      ).rejects.toThrow();
      const channel = (await sql<{ id: number }>`select id from channels`.execute(before.db)).rows[0]?.id;
      await sql`insert into deliveries (channel_id, status, attempts, created_at, next_attempt_at, lease_until, payload)
        values (${channel}, 'sent', 1, ${now}, 0, 0, '{}')`.execute(before.db);
      await before.close();

      const after = await open('0027-channel-kinds-unchecked');
      try {
        const channels = await after.db.selectFrom('channels').selectAll().execute();
        expect(channels).toEqual([
          expect.objectContaining({
            id: channel,
            name: 'hook',
            type: 'webhook',
            owner_id: user,
            decided_by: user,
          }),
        ]);
        const deliveries = await after.db.selectFrom('deliveries').selectAll().execute();
        expect(deliveries).toEqual([expect.objectContaining({ channel_id: channel, sequence_key: null })]);
        for (const type of ['teams', 'pagerduty', 'opsgenie'] as const)
          await after.db
            .insertInto('channels')
            .values({
              name: type,
              type,
              config: '{}',
              owner_id: user as number,
              decided_by: null,
              created_at: now,
              updated_at: now,
            })
            .execute();
        // New ids follow the kept ones.
        const ids = (await after.db.selectFrom('channels').select('id').orderBy('id').execute()).map(
          (r) => r.id,
        );
        expect(ids[0]).toBe(channel);
        expect(new Set(ids).size).toBe(4);
        await expect(
          sql`insert into channels (name, type, config, owner_id, created_at, updated_at)
            values ('x', 'pager', '{}', ${user}, ${now}, ${now})`.execute(after.db),
        ).rejects.toThrow();
        // The foreign keys still hold: a channel deleted takes its deliveries.
        await after.db
          .deleteFrom('channels')
          .where('id', '=', channel as number)
          .execute();
        expect(await after.db.selectFrom('deliveries').selectAll().execute()).toEqual([]);
      } finally {
        await after.close();
      }
    });
  });

  it('then leaves kinds to the API: the store keeps its channels and takes any kind', async () => {
    await inFreshStore(url, async (open) => {
      const before = await open('0027-channel-kinds-unchecked');
      const now = new Date().toISOString();
      await sql`insert into users (username, created_at) values ('ann', ${now})`.execute(before.db);
      const user = (await sql<{ id: number }>`select id from users`.execute(before.db)).rows[0]?.id as number;
      await sql`insert into channels (name, type, config, owner_id, created_at, updated_at, decided_by)
        values ('pd', 'pagerduty', '{"routing_key":"k"}', ${user}, ${now}, ${now}, ${user})`.execute(
        before.db,
      );
      await before.close();
      const after = await open();
      try {
        expect(
          await after.db.selectFrom('channels').select(['name', 'type', 'decided_by']).execute(),
        ).toEqual([{ name: 'pd', type: 'pagerduty', decided_by: user }]);
        await sql`insert into channels (name, type, config, owner_id, created_at, updated_at)
          values ('n', 'ntfy', '{}', ${user}, ${now}, ${now})`.execute(after.db);
        expect(
          (await after.db.selectFrom('channels').select('type').orderBy('id').execute()).map((r) => r.type),
        ).toEqual(['pagerduty', 'ntfy']);
        // The owner's foreign key holds: a deleted user takes their channels.
        await sql`delete from users where id = ${user}`.execute(after.db);
        expect(await after.db.selectFrom('channels').selectAll().execute()).toEqual([]);
      } finally {
        await after.close();
      }
    });
  });
});
