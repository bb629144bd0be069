import type { Bus, ClusterTopics } from '../core/bus.js';
import { counter, gauge, type MetricDecl } from '../core/metrics.js';
import type { EventStore } from '../event-store/event-store.js';
import { NO_EVENT, type ReadScope } from '../event-store/read-scope.js';
import type { FilterNode } from '../filter/ast.js';
import { refusal } from './admission.js';
import {
  inProgress,
  type JobDefinition,
  type JobListener,
  newJob,
  type QueryJob,
  type QueryRow,
} from './job.js';
import type { JobStore } from './job-store.js';
import { presentJob } from './present.js';
import { ResultsBudget } from './results-budget.js';
import { type Computation, computeJob } from './runner-compute.js';
import { readsAs, SharedJobs } from './shared-jobs.js';
import { isRelative } from './time-range.js';
import type { MetricAnswers } from './types/metric.js';
import type { PresentOptions } from './types/query-type.js';

export interface RunnerOptions {
  /** Events per slice above which a sliceable query is split (newest first). */
  sliceEvents: number;
  maxSlices: number;
  /** A relative query read or watched is re-evaluated at most this often (ms). */
  refreshMs: number;
  /** Told of each computation that failed (the log's place: its text is not shown to clients). */
  onError?: (error: unknown, queryId: string) => void;
  /**
   * Bytes (estimated) the results of all queries may hold together; beyond it the results
   * of the least recently read finished queries are dropped (recomputed on their next read).
   */
  resultsBudgetBytes?: number;
  /** Live queries (running, or watched by a live subscription) a user may have at once; beyond it 429. */
  maxLivePerUser?: number;
  /** Lease of a computation in a shared job store (ms; renewed every third of it). */
  leaseMs?: number;
  /** How long a stop waits for the node computing the query before recording it itself (ms). */
  remoteStopMs?: number;
  /** What answers Metric queries (the log-metrics feature); without it they end ERROR. */
  metrics?: MetricAnswers;
}

/**
 * Runs queries on the event store: full computation or newest-first time slices with
 * partial results (one computation: runner-compute.ts), stop (which interrupts the
 * engine), recalculation, and re-evaluation of relative-time queries while they are read.
 * Holds the live state of the queries this process serves in memory; definitions are in
 * the metadata store.
 *
 * The job store decides who computes (see job-store.ts). With the memory store this
 * process computes everything and a restart recomputes on first read. With a shared
 * store (cluster) a node computes a query only under its lease, writes each state change
 * there and announces it on the bus (`query-changed` with the version); the other nodes
 * keep copies they refresh from the store, forward stops to it (`stop-query`), and take
 * the work over when its node dies (its lease expires: `adopt`); that part is
 * SharedJobs (shared-jobs.ts).
 */
export class QueryRunner {
  private readonly jobs = new Map<string, QueryJob>();
  /** Computations started (for /metrics). */
  private evaluations = 0;
  /** Estimated bytes held by the results of the jobs in `jobs`. */
  private readonly budget: ResultsBudget;
  /** Queries a live subscription on this node watches: never evicted, counted as live. */
  private readonly pins = new Set<string>();
  private readonly listeners = new Set<JobListener>();
  /** Writing, announcing, following and leasing jobs in a shared job store. */
  private readonly shared: SharedJobs;
  /** What each computation uses of this runner (runner-compute.ts). */
  private readonly computation: Computation;

  constructor(
    private readonly store: EventStore,
    bus: Bus<ClusterTopics>,
    jobStore: JobStore,
    private readonly opts: RunnerOptions,
  ) {
    this.budget = new ResultsBudget(opts.resultsBudgetBytes);
    this.shared = new SharedJobs(
      jobStore,
      bus,
      {
        peek: (id) => this.jobs.get(id),
        jobs: () => this.jobs.values(),
        emitLocal: (job) => this.emitLocal(job),
        hold: (job, results) => this.hold(job, results),
        release: (job) => this.release(job),
        stop: (job) => this.stop(job),
      },
      opts,
    );
    this.computation = {
      store,
      shared: this.shared,
      opts,
      started: () => this.evaluations++,
      hold: (job, results) => this.hold(job, results),
      refresh: (job, all) => this.refresh(job, all),
      emitLocal: (job) => this.emitLocal(job),
    };
  }

  /** Called on every change of a job in this process (partial results, final result, re-evaluation, removal). */
  onChange(listener: JobListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emitLocal(job: QueryJob) {
    for (const l of this.listeners) l(job);
  }

  /** Refreshes a copy from the shared state; this process's listeners hear of a change. */
  follow(job: QueryJob): Promise<void> {
    return this.shared.follow(job);
  }

  /**
   * Takes the shared state into a copy this process does not compute now; true when it
   * changed. `all`: read it even at the version held (results dropped here). A copy whose
   * query was removed elsewhere is forgotten (`peek` then finds nothing).
   */
  refresh(job: QueryJob, all = false): Promise<boolean> {
    return this.shared.refresh(job, all);
  }

  /** Re-evaluates a finished query now (live updates on new data); no-op while it runs or is stopped. */
  reevaluate(job: QueryJob): Promise<void> {
    if (job.running || job.stopped || !this.jobs.has(job.id)) return Promise.resolve();
    this.compute(job, job.status === 'SUCCESS', false);
    return job.running ?? Promise.resolve();
  }

  /**
   * A live subscription starts watching the job: from now on it counts as one of its
   * owner's live queries and its results are never evicted. Admitted like a start (see
   * `admit`), in the same synchronous step that pins it, so simultaneous subscriptions
   * cannot all pass one check. True when this call pinned it (false: it already was).
   */
  pin(job: QueryJob): boolean {
    if (this.pins.has(job.id)) return false;
    this.admit(job.ownerId, job);
    this.pins.add(job.id);
    return true;
  }

  /** Nobody on this node watches the query any more. */
  unpin(id: string): void {
    this.pins.delete(id);
  }

  /** Whether a live subscription on this node watches the query (kept past its TTL). */
  watched(id: string): boolean {
    return this.pins.has(id);
  }

  /** Memory held by results, for /metrics and tests. */
  memory(): { heldBytes: number; budgetBytes: number; evictions: number; jobs: number } {
    return {
      heldBytes: this.budget.held,
      budgetBytes: this.opts.resultsBudgetBytes ?? Number.POSITIVE_INFINITY,
      evictions: this.budget.evictions,
      jobs: this.jobs.size,
    };
  }

  /**
   * The one admission of a query becoming live (computed, or watched): every start,
   * recalculation, recomputation of dropped results and pin goes through it, in the same
   * synchronous step that makes the job live (see `refusal` in admission.ts). `except`:
   * the job itself (a restart or a pin), not counted.
   */
  admit(ownerId: number, except?: QueryJob): void {
    const refusal = this.refusal(ownerId, except);
    if (refusal) throw refusal;
  }

  private refusal(ownerId: number, except?: QueryJob) {
    return refusal(this.jobs.values(), (id) => this.watched(id), this.opts, ownerId, except);
  }

  /** Queries held in memory, by status. */
  stats(): Record<string, number> {
    const byStatus: Record<string, number> = {};
    for (const job of this.jobs.values()) byStatus[job.status] = (byStatus[job.status] ?? 0) + 1;
    return byStatus;
  }

  metrics(): MetricDecl[] {
    return [
      counter(
        'logscope_query_evaluations_total',
        'Query computations started on this node (first runs, re-evaluations of watched queries, recalculations).',
        () => this.evaluations,
      ),
      gauge(
        'logscope_query_results_bytes',
        'Estimated memory held by query results (bounded by queryResultsMemoryMb).',
        () => this.budget.held,
      ),
      counter(
        'logscope_query_results_evictions_total',
        'Finished query results dropped to stay within the budget (recomputed on their next read).',
        () => this.budget.evictions,
      ),
      gauge('logscope_queries', 'Queries held in memory, by status.', () => this.stats(), 'status'),
    ];
  }

  peek(id: string): QueryJob | undefined {
    return this.jobs.get(id);
  }

  /**
   * Makes a job from a stored definition and starts it. `adopt`: a job another node left
   * (computed only if its lease is still free when this node asks for it).
   */
  start(
    row: QueryRow,
    filter: FilterNode,
    scope: ReadScope,
    opts: { internal?: boolean; adopt?: boolean; scopeFixed?: boolean } = {},
  ): QueryJob {
    // A report's or export's query, or a dead node's work taken over, is not a user's new live query.
    if (!opts.internal && !opts.adopt) this.admit(row.owner_id);
    const job = newJob(row, filter, scope, opts.internal ?? false, opts.scopeFixed);
    this.track(job);
    this.compute(job, false, !opts.adopt);
    return job;
  }

  /**
   * A job this process does not hold: its shared state where there is one (computed, or
   * being computed by a live node), otherwise computed here from its definition (the
   * memory store after a restart; a cluster's query whose node died). Computing it from
   * its definition is admitted as a live query unless `admit` is false (see `revive`).
   */
  async open(row: QueryRow, filter: FilterNode, scope: ReadScope, admit = true): Promise<QueryJob> {
    const job = newJob(row, filter, scope, false);
    if (this.shared.shares(job)) {
      const stored = await this.shared.load(job.id);
      const held = this.jobs.get(job.id);
      if (held) return held;
      // A state computed under another read scope (a widget's query, shared by its
      // viewers' scope, read by its owner whose rights changed) is not this copy's: it is
      // computed here under its own.
      const foreign = stored?.state ? !readsAs(job, stored.state) : false;
      if (foreign) {
        if (admit) this.admit(job.ownerId);
        this.track(job);
        this.compute(job, false, true);
        return job;
      }
      if (stored?.state || stored?.leased) {
        this.track(job);
        if (stored.state) await this.refresh(job, true);
        // Left unfinished by a node that died: taken over like `adopt`, not a new live query.
        if (stored.leased || !inProgress(job)) return job;
        this.compute(job, false, false);
        return job;
      }
    }
    if (admit) this.admit(job.ownerId);
    this.track(job);
    this.compute(job, false, false);
    return job;
  }

  /**
   * Rights changed: each job held here (or those of `only`: one read of a held query) gets
   * its owner's read again (`definition`; null when it cannot be resolved any more: it
   * then reads nothing). No result computed under the former read is kept: a job whose
   * read changed is computed again at once, and a stopped one loses its results (they are
   * computed again on its next read, as after an eviction), so no result, export or live
   * update keeps what its owner may no longer read. Returns how many changed.
   */
  async rescope(
    definition: (job: QueryJob) => Promise<{ filter: FilterNode; scope: ReadScope } | null>,
    only?: readonly QueryJob[],
  ): Promise<number> {
    let changed = 0;
    for (const job of only ?? [...this.jobs.values()]) {
      const def = (await definition(job).catch(() => null)) ?? { filter: job.filter, scope: NO_EVENT };
      if (
        def.scope.key === job.scope.key &&
        (def.filter === job.filter || JSON.stringify(def.filter) === JSON.stringify(job.filter))
      )
        continue;
      job.scope = def.scope;
      job.filter = def.filter;
      changed++;
      if (this.jobs.get(job.id) !== job) continue;
      if (job.stopped) {
        // A stop under way keeps no partial results either (see computeJob).
        this.hold(job, null);
        job.evicted = true;
        continue;
      }
      try {
        this.recalculate(job);
      } catch {
        // Not admitted again (results memory full): dropped here, computed on its next read.
        this.forget(job.id);
      }
    }
    return changed;
  }

  /** Adopts the queries whose node died mid-computation; returns how many it started. */
  async adopt(definition: (id: string) => Promise<JobDefinition | null>): Promise<number> {
    return this.shared.adopt(definition, async (d) => {
      // What the dead node left running on a shared engine stops first (its tag is the job's id).
      await this.store.abandon(`${d.row.query_id}:`);
      this.start(d.row, d.filter, d.scope, { adopt: true });
    });
  }

  private track(job: QueryJob) {
    const previous = this.jobs.get(job.id);
    if (previous) this.release(previous);
    this.jobs.set(job.id, job);
  }

  /**
   * Waits until the job settles or `ms` pass, whichever is first. A job another node
   * computes is followed through the shared store.
   */
  async settle(job: QueryJob, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    await this.shared.followUntil(job, deadline);
    if (!job.running) return;
    let timer: NodeJS.Timeout | undefined;
    const left = Math.max(0, deadline - Date.now());
    await Promise.race([job.running, new Promise<void>((r) => (timer = setTimeout(r, left)))]);
    clearTimeout(timer);
  }

  /**
   * A read: re-evaluates a relative-time query in the background when it is due and its
   * owner may have one more live query (else the read serves the last results).
   */
  touch(job: QueryJob): void {
    if (
      isRelative(job.params.time_range) &&
      !job.stopped &&
      !job.running &&
      job.status === 'SUCCESS' &&
      Date.now() - job.baseMs >= this.opts.refreshMs &&
      !this.refusal(job.ownerId, job)
    ) {
      this.compute(job, true, false);
    }
  }

  /**
   * A read of a job whose results were evicted: computes them again from the definition
   * (as after a restart). True when a computation started. Admitted as a live query
   * unless `admit` is false (a stop or removal, which ends the computation at once).
   */
  revive(job: QueryJob, admit = true): boolean {
    if (!job.evicted || job.running || !this.jobs.has(job.id)) return false;
    if (admit) this.admit(job.ownerId, job);
    job.evicted = false;
    job.stopped = false;
    job.readAt = Date.now();
    this.compute(job, false, false);
    return true;
  }

  recalculate(job: QueryJob): void {
    this.admit(job.ownerId, job);
    job.controller?.abort();
    this.shared.recalculating(job);
    job.stopped = false;
    job.evicted = false;
    // The aborted run settles as STOPPED first; the fresh run starts after it.
    const previous = job.running ?? Promise.resolve();
    job.status = 'PENDING';
    this.hold(job, null);
    job.progress = 0;
    job.error = null;
    job.running = previous.then(() => this.run(job, false, true));
  }

  /**
   * Stops a query. One another node computes is asked to stop (bus and store) and
   * followed until it has; when its node does not answer (dead), the stop is recorded
   * here. A finished query is only marked: nobody re-evaluates it until recalculated.
   */
  async stop(job: QueryJob): Promise<void> {
    job.stopped = true;
    if (job.running && job.controller) {
      job.controller.abort();
      await job.running;
      return;
    }
    if (this.shared.shares(job)) await this.shared.stop(job);
  }

  /** Forgets a job, interrupting its work; listeners get it one last time with status unchanged. */
  async remove(job: QueryJob): Promise<void> {
    this.release(job);
    job.stopped = true;
    job.controller?.abort();
    await job.running;
    this.emitLocal(job);
    this.shared.removed(job);
  }

  /** The results as the API shows them (PENDING: empty; re-paging a Search: see presentJob). */
  present(job: QueryJob, opts: PresentOptions): Promise<unknown> {
    return presentJob(this.store, job, opts);
  }

  private compute(job: QueryJob, reevaluation: boolean, force: boolean): void {
    job.running = this.run(job, reevaluation, force);
  }
  private run(job: QueryJob, reevaluation: boolean, force: boolean): Promise<void> {
    return computeJob(this.computation, job, reevaluation, force);
  }

  /** Stops renewing leases (the process is closing; what it computes is left to the others). */
  close(): void {
    this.shared.close();
  }

  /** Drops a job from memory without touching its definition (TTL sweep). */
  forget(id: string): void {
    const job = this.jobs.get(id);
    if (!job) return;
    job.controller?.abort();
    this.release(job);
  }

  /** Takes a job out of the map and its results out of the budget. */
  private release(job: QueryJob): void {
    if (this.jobs.get(job.id) !== job) return;
    this.budget.release(job);
    this.jobs.delete(job.id);
  }

  /** Sets a job's results within the results budget (see ResultsBudget). */
  private hold(job: QueryJob, results: unknown): void {
    this.budget.hold(job, results, this.jobs.get(job.id) === job, this.jobs.values(), (id) =>
      this.watched(id),
    );
  }
}
