import type { Identity } from '../../core/identity.js';
import { newUlid } from '../../core/ids.js';
import { createError, fieldError, notFound, permissionDenied } from '../../errors/errors.js';
import type { ColdImportResult, ColdVerifyResult, EventStore } from '../../event-store/event-store.js';
import type { StreamRow } from '../streams/index.js';
import type {
  ColdImportJob,
  ColdImportRequest,
  ColdJob,
  ColdVerifyJob,
  ColdVerifyRequest,
} from './cold-ops-schema.js';

/** Ended jobs kept for `GET /api/cold/jobs/{id}`, newest last. */
const KEPT_JOBS = 100;

/** An answer waited for before the request is answered `202` with the running job. */
const WAIT_MS = 1_000;

const needsEmbeddedStore = () =>
  createError(
    400,
    'cold_tier_needs_embedded_store',
    'The cold tier needs the embedded (DuckDB) event store; ClickHouse moves parts with its own storage policies.',
  );

/**
 * `cold verify` and `cold import` (docs/operations/cold-tier.md): each runs as a job
 * answered in full when done within a second, else `202` and read at
 * `/api/cold/jobs/{id}`. Jobs are held in memory (the cold tier is the embedded store's,
 * one server): a restart forgets them, never the work an import committed.
 */
export class ColdJobs {
  private readonly jobs = new Map<string, ColdJob>();

  constructor(
    private readonly store: EventStore,
    private readonly streams: { all(): Promise<StreamRow[]> },
    private readonly waitMs = WAIT_MS,
  ) {}

  async verify(who: Identity, body: ColdVerifyRequest): Promise<{ done: boolean; job: ColdVerifyJob }> {
    this.admin(who);
    if (body.stream_id !== undefined) await this.streamExists(body.stream_id);
    const job: ColdVerifyJob = {
      ...this.started(),
      kind: 'verify',
      files: 0,
      events: 0,
      bytes: 0,
      problems: [],
    };
    const work = this.store
      .verifyCold({
        ...(body.stream_id !== undefined ? { streamId: body.stream_id } : {}),
        checksums: body.checksums ?? true,
      })
      .then((r: ColdVerifyResult | null) => {
        if (!r) throw needsEmbeddedStore();
        Object.assign(job, r);
      });
    return { done: await this.run(job, work), job };
  }

  async import(who: Identity, body: ColdImportRequest): Promise<{ done: boolean; job: ColdImportJob }> {
    this.admin(who);
    const rows = await this.streams.all();
    if (body.stream_id !== undefined && !rows.some((r) => r.id === body.stream_id))
      throw fieldError('stream_id', `no stream ${body.stream_id}`);
    const job: ColdImportJob = { ...this.started(), kind: 'import', files: [], events: 0 };
    const work = this.store
      .importCold({
        path: body.path,
        ...(body.stream_id !== undefined ? { streamId: body.stream_id } : {}),
        defaultId: rows.find((r) => r.builtin)?.id ?? 1,
        streamIds: rows.map((r) => r.id),
        nowMs: Date.now(),
      })
      .then((r: ColdImportResult | null) => {
        if (!r) throw needsEmbeddedStore();
        Object.assign(job, r);
      });
    return { done: await this.run(job, work), job };
  }

  get(who: Identity, id: string): ColdJob {
    this.admin(who);
    const job = this.jobs.get(id);
    if (!job) throw notFound(`No cold tier job ${id} (jobs are forgotten at a restart).`);
    return job;
  }

  private admin(who: Identity): void {
    if (!who.isAdmin) throw permissionDenied('Only administrators verify and import the cold tier.');
  }

  private async streamExists(id: number): Promise<void> {
    if (!(await this.streams.all()).some((r) => r.id === id))
      throw fieldError('stream_id', `no stream ${id}`);
  }

  private started() {
    return {
      id: newUlid(),
      status: 'RUNNING' as const,
      started_at: new Date().toISOString(),
      finished_at: null,
    };
  }

  /**
   * Runs `work` as `job`; true when it ended within the wait. A failure within the wait
   * (a bad path, ClickHouse) is the request's own error; a later one ends the job ERROR.
   */
  private async run(job: ColdJob, work: Promise<void>): Promise<boolean> {
    let failed: unknown = null;
    const ended = work.then(
      () => {
        job.status = 'DONE';
        job.finished_at = new Date().toISOString();
      },
      (err: unknown) => {
        failed = err;
        job.status = 'ERROR';
        job.error = err instanceof Error ? err.message : String(err);
        job.finished_at = new Date().toISOString();
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.waitMs);
    });
    await Promise.race([ended, waited]);
    clearTimeout(timer);
    if (job.status === 'ERROR' && failed) throw failed;
    this.keep(job);
    return job.status !== 'RUNNING';
  }

  private keep(job: ColdJob): void {
    this.jobs.set(job.id, job);
    const ended = [...this.jobs.values()].filter((j) => j.status !== 'RUNNING');
    for (const j of ended.slice(0, Math.max(0, ended.length - KEPT_JOBS))) this.jobs.delete(j.id);
  }
}
