import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Named leases: one holder at a time, taken over once the holder stops renewing. */
export class LeasesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Takes or renews `name` for `owner` until `now + ttlMs` when it is free, expired or
   * already `owner`'s (one conditional upsert, so two nodes never both hold it). Answers
   * whether `owner` holds it now.
   */
  async hold(name: string, owner: string, now: number, ttlMs: number): Promise<boolean> {
    await this.db
      .insertInto('leases')
      .values({ name, owner, lease_until: now + ttlMs })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet((eb) => ({
            owner: eb.ref('excluded.owner'),
            lease_until: eb.ref('excluded.lease_until'),
          }))
          .where((eb) => eb.or([eb('leases.owner', '=', owner), eb('leases.lease_until', '<', now)])),
      )
      .execute();
    const row = await this.db
      .selectFrom('leases')
      .select('owner')
      .where('name', '=', name)
      .executeTakeFirst();
    return row?.owner === owner;
  }

  /** Gives `name` up if `owner` holds it (a clean stop: another node takes over at once). */
  async release(name: string, owner: string): Promise<void> {
    await this.db.deleteFrom('leases').where('name', '=', name).where('owner', '=', owner).execute();
  }
}
