import { describe, expect, it } from 'vitest';
import { SchedulesRepository } from '../../../src/features/schedules/schedules-repository.js';
import { freshMetadata, METADATA_BACKENDS } from '../../helpers/metadata.js';

/**
 * A schedule's slot is claimed once, whoever asks (two nodes, or one before and after a
 * lease hand-over), and its next slot moves only from the value the mover read.
 */
describe.each(METADATA_BACKENDS)('schedule slot claims on $name', ({ url }) => {
  it('gives each slot to exactly one claimant and moves next_run_at only from what it was', async () => {
    const { meta, dispose } = await freshMetadata(url, 'slot-claims');
    try {
      const now = new Date().toISOString();
      const user = await meta.db
        .insertInto('users')
        .values({
          username: 'ada',
          password_hash: null,
          is_admin: 0,
          permissions: '[]',
          created_at: now,
          oidc_issuer: null,
          oidc_subject: null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const repo = new SchedulesRepository(meta.db);
      const s = await repo.insert({
        name: 's',
        description: '',
        owner_id: user.id,
        source: '{"dashboard_id":1}',
        format: 'csv',
        time_range: null,
        cron: '* * * * *',
        time_zone: 'UTC',
        deliver_to: '[]',
        enabled: 1,
        keep_reports: 10,
        last_run: null,
        next_run_at: 60_000,
        created_at: now,
        updated_at: now,
      });
      const both = await Promise.all([repo.claim(s.id, 60_000, 'a'), repo.claim(s.id, 60_000, 'b')]);
      expect(both.filter(Boolean)).toHaveLength(1);
      expect(await repo.claim(s.id, 60_000, 'c')).toBe(false);
      expect(await repo.claim(s.id, 120_000, 'b')).toBe(true);
      expect(await repo.advance(s.id, 60_000, 180_000)).toBe(true);
      expect(await repo.advance(s.id, 60_000, 240_000)).toBe(false);
      expect((await repo.byId(s.id))?.next_run_at).toBe(180_000);
      expect(await repo.due(179_999)).toHaveLength(0);
      expect((await repo.due(180_000)).map((r) => r.id)).toEqual([s.id]);
      // A run marked running refuses a second until it ends.
      expect(await repo.setLastRun(s.id, JSON.stringify({ status: 'running' }), true)).toBe(true);
      expect(await repo.setLastRun(s.id, JSON.stringify({ status: 'running' }), true)).toBe(false);
      expect(await repo.setLastRun(s.id, JSON.stringify({ status: 'ok' }))).toBe(true);
      expect(await repo.setLastRun(s.id, JSON.stringify({ status: 'running' }), true)).toBe(true);
      await repo.forgetClaims(150_000);
      expect(await repo.claim(s.id, 60_000, 'd')).toBe(true);
    } finally {
      await dispose();
    }
  });
});
