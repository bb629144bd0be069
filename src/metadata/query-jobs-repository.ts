import type { Kysely } from 'kysely';
import type { JobState, JobStore, StoredJob } from '../query/job-store.js';
import type { Database } from './schema.js';

export interface SqlJobStoreOptions {
  /** This node's id (the owner written with each lease). */
  node: string;
  /** How long a lease lasts without renewal (ms). */
  leaseMs: number;
}

/**
 * The shared job store of a cluster: one `query_jobs` row per query computed since it was
 * created, with its state, its results and the lease of the node computing it.
 * Times are epoch milliseconds of each node's clock: nodes keep their clocks in step
 * (NTP) and leases last seconds, far longer than any such drift.
 */
export class SqlJobStore implements JobStore {
  readonly shared = true;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly opts: SqlJobStoreOptions,
  ) {}

  async claim(queryId: string, force: boolean): Promise<{ stopRequested: boolean } | null> {
    const now = Date.now();
    const until = now + this.opts.leaseMs;
    const row = await this.db
      .insertInto('query_jobs')
      .values({
        query_id: queryId,
        version: 0,
        owner: this.opts.node,
        lease_until: until,
        stop_requested: 0,
        status: 'PENDING',
        state: null,
        results: null,
      })
      .onConflict((oc) => {
        const update = oc.column('query_id').doUpdateSet((eb) => ({
          owner: this.opts.node,
          lease_until: until,
          stop_requested: force ? 0 : eb.ref('query_jobs.stop_requested'),
        }));
        return force
          ? update
          : update.where((eb) =>
              eb.or([eb('query_jobs.lease_until', '<', now), eb('query_jobs.owner', '=', this.opts.node)]),
            );
      })
      .returning('stop_requested')
      .executeTakeFirst();
    return row ? { stopRequested: row.stop_requested !== 0 } : null;
  }

  async save(queryId: string, state: JobState, final: boolean): Promise<number | null> {
    const { results, ...rest } = state;
    const row = await this.db
      .updateTable('query_jobs')
      .set((eb) => ({
        version: eb('version', '+', 1),
        status: state.status,
        state: JSON.stringify(rest),
        results: results === null ? null : JSON.stringify(results),
        ...(final ? { lease_until: 0 } : {}),
      }))
      .where('query_id', '=', queryId)
      .where('owner', '=', this.opts.node)
      .returning('version')
      .executeTakeFirst();
    return row ? row.version : null;
  }

  async load(queryId: string, version: number): Promise<StoredJob | null> {
    const row = await this.db
      .selectFrom('query_jobs')
      .select(['version', 'lease_until', 'stop_requested', 'state'])
      .where('query_id', '=', queryId)
      .executeTakeFirst();
    if (!row) return null;
    const head = {
      version: row.version,
      leased: row.lease_until > Date.now(),
      stopRequested: row.stop_requested !== 0,
    };
    if (row.version <= version || row.state === null) return { ...head, state: null };
    const full = await this.db
      .selectFrom('query_jobs')
      .select(['version', 'state', 'results'])
      .where('query_id', '=', queryId)
      .executeTakeFirst();
    if (!full?.state) return null;
    const state = JSON.parse(full.state) as Omit<JobState, 'results'>;
    return {
      ...head,
      version: full.version,
      state: { ...state, results: full.results === null ? null : JSON.parse(full.results) },
    };
  }

  async release(queryId: string): Promise<void> {
    await this.db
      .updateTable('query_jobs')
      .set({ lease_until: 0 })
      .where('query_id', '=', queryId)
      .where('owner', '=', this.opts.node)
      .execute();
  }

  async renew(queryIds: readonly string[]): Promise<void> {
    if (!queryIds.length) return;
    await this.db
      .updateTable('query_jobs')
      .set({ lease_until: Date.now() + this.opts.leaseMs })
      .where('owner', '=', this.opts.node)
      .where('lease_until', '>', 0)
      .where('query_id', 'in', queryIds)
      .execute();
  }

  async requestStop(queryId: string): Promise<void> {
    await this.db
      .updateTable('query_jobs')
      .set({ stop_requested: 1 })
      .where('query_id', '=', queryId)
      .execute();
  }

  async orphans(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('query_jobs')
      .select('query_id')
      .where('status', 'in', ['PENDING', 'IN_PROGRESS'])
      .where('lease_until', '<', Date.now())
      .limit(100)
      .execute();
    return rows.map((r) => r.query_id);
  }
}
