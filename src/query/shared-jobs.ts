import type { Bus, ClusterTopics } from '../core/bus.js';
import { inProgress, type JobDefinition, type QueryJob, stateOf } from './job.js';
import type { JobState, JobStore, StoredJob } from './job-store.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the shared part needs of the runner that holds the jobs of this process. */
export interface SharedJobsHost {
  /** The job this process holds under `id`. */
  peek(id: string): QueryJob | undefined;
  /** Every job this process holds. */
  jobs(): Iterable<QueryJob>;
  /** Tells this process's listeners of a change. */
  emitLocal(job: QueryJob): void;
  /** Sets a job's results within the results budget. */
  hold(job: QueryJob, results: unknown): void;
  /** Takes a job out of this process's memory. */
  release(job: QueryJob): void;
  /** Stops a job (asked by another node). */
  stop(job: QueryJob): Promise<void>;
}

export interface SharedJobsOptions {
  /** Lease of a computation in a shared job store (ms; renewed every third of it). */
  leaseMs?: number;
  /** How long a stop waits for the node computing the query before recording it itself (ms). */
  remoteStopMs?: number;
  /** Told of each failed write of a job's state. */
  onError?: (error: unknown, queryId: string) => void;
}

/**
 * The runner's side of a shared job store (cluster; see job-store.ts): writes each state
 * change computed here under the job's lease and announces it on the bus
 * (`query-changed` with the version), renews the leases of the jobs computed here,
 * refreshes the copies of jobs other nodes compute, forwards stops to them (`stop-query`),
 * and takes over the work of a node that died (its lease expired: `adopt`). With the
 * memory store (`shared` false) every job is this process's alone and this part only
 * tells the local listeners.
 */
export class SharedJobs {
  private readonly renewer: NodeJS.Timeout | null;
  private readonly offBus: Array<() => void> = [];
  /** Controllers aborted because another node took the lease: the job is refreshed, not STOPPED. */
  private readonly lostLease = new WeakSet<AbortController>();

  constructor(
    private readonly jobStore: JobStore,
    private readonly bus: Bus<ClusterTopics>,
    private readonly host: SharedJobsHost,
    private readonly opts: SharedJobsOptions,
  ) {
    const leaseMs = opts.leaseMs ?? 3000;
    this.renewer = jobStore.shared
      ? setInterval(() => {
          const ids = [...host.jobs()].filter((j) => j.running && this.shares(j)).map((j) => j.id);
          jobStore.renew(ids).catch(() => undefined);
        }, leaseMs / 3).unref()
      : null;
    if (!jobStore.shared) return;
    this.offBus.push(
      bus.subscribe('query-changed', (m, remote) => {
        if (remote) this.changedElsewhere(m.queryId, m.version, m.removed);
      }),
      bus.subscribe('stop-query', (m, remote) => {
        const job = host.peek(m.queryId);
        if (remote && job?.running) void host.stop(job);
      }),
    );
  }

  /** Whether the job's state is shared with other nodes. */
  shares(job: QueryJob): boolean {
    return this.jobStore.shared && !job.internal;
  }

  /** A change computed here: told to this process, then written and announced (`final` ends the lease). */
  emit(job: QueryJob, final = false): void {
    this.host.emitLocal(job);
    if (!this.shares(job)) return;
    const state = stateOf(job);
    const controller = job.controller;
    void this.serially(job, async () => {
      const version = await this.jobStore.save(job.id, state, final);
      if (version === null) {
        // Another node took the lease (this one was too slow to renew it): its result wins.
        if (controller && !controller.signal.aborted) {
          this.lostLease.add(controller);
          controller.abort();
        }
        return;
      }
      job.version = Math.max(job.version, version);
      this.bus.publish('query-changed', { queryId: job.id, version, removed: false });
    }).catch((err: unknown) => this.opts.onError?.(err, job.id));
  }

  /** Whether the computation under `controller` was aborted because another node took its lease. */
  lost(controller: AbortController): boolean {
    return this.lostLease.has(controller);
  }

  /** Runs the job store's operations on one job in order. */
  private serially<T>(job: QueryJob, op: () => Promise<T>): Promise<T> {
    const next = job.serial.then(op, op);
    job.serial = next.catch(() => undefined);
    return next;
  }

  /** Another node changed or removed a query this process holds a copy of. */
  private changedElsewhere(queryId: string, version: number, removed: boolean) {
    const job = this.host.peek(queryId);
    if (!job) return;
    if (removed) {
      this.removedElsewhere(job);
      return;
    }
    if (job.running || version <= job.version) return;
    this.follow(job).catch(() => undefined);
  }

  /** The query was removed on another node: forgotten here, its watchers told one last time. */
  private removedElsewhere(job: QueryJob) {
    if (this.host.peek(job.id) !== job) return;
    this.host.release(job);
    job.stopped = true;
    job.controller?.abort();
    this.host.emitLocal(job);
  }

  /** Refreshes a copy from the shared state; this process's listeners hear of a change. */
  async follow(job: QueryJob): Promise<void> {
    if (await this.refresh(job)) this.host.emitLocal(job);
  }

  /** See QueryRunner.refresh. */
  async refresh(job: QueryJob, all = false): Promise<boolean> {
    if (!this.shares(job) || job.running) return false;
    // In line behind this node's own pending writes: read before them, the store still
    // held an earlier partial state of a job computed here, which then replaced the
    // final results (a sliced query read right after SUCCESS lost its last slice).
    const stored = await this.serially(job, () => this.jobStore.load(job.id, all ? -1 : job.version));
    // Gone from the shared store after it was there: removed on another node (whose
    // notice may not have arrived yet). The copy goes too; `peek` no longer finds it.
    if (!stored && job.version > 0 && !job.running) this.removedElsewhere(job);
    if (!stored?.state || job.running) return false;
    const s = stored.state;
    // Computed under another read than this copy's: not this copy's to show (see `readsAs`).
    if (!readsAs(job, s)) return false;
    job.version = stored.version;
    job.status = s.status;
    job.progress = s.progress;
    job.error = s.error;
    job.baseMs = s.baseMs;
    job.window = s.window;
    job.updatedAt = s.updatedAt;
    job.stopped = s.stopped;
    job.evicted = false;
    this.host.hold(job, s.results);
    return true;
  }

  /** The whole shared state of a query (null: nothing stored). */
  load(queryId: string): Promise<StoredJob | null> {
    return this.jobStore.load(queryId, -1);
  }

  /**
   * Starts (`start`) the queries whose node died mid-computation and whose definition
   * `definition` finds; returns how many.
   */
  async adopt(
    definition: (id: string) => Promise<JobDefinition | null>,
    start: (definition: JobDefinition) => void | Promise<void>,
  ): Promise<number> {
    if (!this.jobStore.shared) return 0;
    let n = 0;
    for (const id of await this.jobStore.orphans()) {
      if (this.host.peek(id)?.running) continue;
      const def = await definition(id);
      if (!def) continue;
      await start(def);
      n++;
    }
    return n;
  }

  /** Follows a job another node computes until it settles or `deadline` (epoch ms) passes. */
  async followUntil(job: QueryJob, deadline: number): Promise<void> {
    while (!job.running && this.shares(job) && inProgress(job) && Date.now() < deadline) {
      await sleep(Math.min(50, deadline - Date.now()));
      await this.refresh(job).catch(() => undefined);
    }
  }

  /** A recalculation here: whoever computes the query elsewhere stops (this node takes the lease). */
  recalculating(job: QueryJob): void {
    if (this.shares(job) && !job.running && inProgress(job))
      this.bus.publish('stop-query', { queryId: job.id });
  }

  /**
   * Stops a shared query this process does not compute: its node is asked to (bus and
   * store) and followed until it has; when that node does not answer (dead), the stop is
   * recorded here.
   */
  async stop(job: QueryJob): Promise<void> {
    if (!this.shares(job)) return;
    if (inProgress(job)) {
      await this.jobStore.requestStop(job.id);
      this.bus.publish('stop-query', { queryId: job.id });
      const deadline = Date.now() + (this.opts.remoteStopMs ?? 3000);
      while (inProgress(job) && Date.now() < deadline) {
        await sleep(50);
        await this.refresh(job);
      }
      if (!inProgress(job)) return;
      job.status = 'STOPPED';
      job.updatedAt = new Date().toISOString();
    }
    job.stopped = true;
    await this.serially(job, () => this.jobStore.claim(job.id, true));
    this.emit(job, true);
    await job.serial;
  }

  /** The query was removed here: the other nodes forget their copies. */
  removed(job: QueryJob): void {
    if (this.shares(job))
      this.bus.publish('query-changed', { queryId: job.id, version: job.version, removed: true });
  }

  /** A re-evaluation that changed nothing gives the lease up without writing. */
  unchanged(job: QueryJob): void {
    if (this.shares(job)) void this.serially(job, () => this.jobStore.release(job.id)).catch(() => undefined);
  }

  /**
   * Takes the job's lease before computing it (true when not shared): false when another
   * node computes it (this copy is refreshed instead) or a stop was asked for while its
   * node was away (recorded).
   */
  async lease(job: QueryJob, controller: AbortController, force: boolean): Promise<boolean> {
    if (!this.shares(job)) return true;
    let claim: { stopRequested: boolean } | null;
    try {
      claim = await this.serially(job, () => this.jobStore.claim(job.id, force));
    } catch (err) {
      // The store cannot tell now: compute here (the result is this node's to serve).
      this.opts.onError?.(err, job.id);
      return true;
    }
    if (claim && !claim.stopRequested) return true;
    if (job.controller === controller) {
      job.controller = null;
      job.running = null;
    }
    if (!claim) {
      await this.refresh(job, job.results === null).catch(() => undefined);
      return false;
    }
    job.stopped = true;
    if (inProgress(job)) job.status = 'STOPPED';
    job.updatedAt = new Date().toISOString();
    this.emit(job, true);
    return false;
  }

  /** Stops renewing leases and listening to the bus. */
  close(): void {
    if (this.renewer) clearInterval(this.renewer);
    for (const off of this.offBus) off();
  }
}

/** Whether a shared state was computed under the copy's read scope (states without a key: yes). */
export function readsAs(job: QueryJob, state: JobState): boolean {
  return state.scopeKey === undefined || state.scopeKey === job.scope.key;
}
