import type { Bus, ClusterTopics } from '../core/bus.js';
import { counter, gauge, type MetricDecl } from '../core/metrics.js';
import { type AppError, fieldError, outOfMemory, tooManyRequests } from '../errors/errors.js';
import type { EventStore } from '../event-store/event-store.js';
import type { SearchResult, TimeWindow } from '../event-store/query-plan.js';
import type { FilterNode } from '../filter/ast.js';
import { inProgress, type JobListener, publicMessage, type QueryJob, type QueryRow, stateOf } from './job.js';
import type { JobStore } from './job-store.js';
import { ResultsBudget } from './results-budget.js';
import { pagedSearch, sliceWindow } from './slicing.js';
import { isRelative, resolveTimeRange } from './time-range.js';
import { QUERY_TYPE_DEFS } from './types/index.js';
import type { CommonParamValues, PresentOptions, QueryTypeName } from './types/query-type.js';
import { Search, type SearchParams } from './types/search.js';

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
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs queries on the event store: full computation or newest-first time slices with
 * partial results, stop (which interrupts the engine), recalculation, and re-evaluation of
 * relative-time queries while they are read. Holds the live state of the queries this
 * process serves in memory; definitions are in the metadata store.
 *
 * The job store decides who computes (see job-store.ts). With the memory store this
 * process computes everything and a restart recomputes on first read. With a shared
 * store (cluster) a node computes a query only under its lease, writes each state change
 * there and announces it on the bus (`query-changed` with the version); the other nodes
 * keep copies they refresh from the store, forward stops to it (`stop-query`), and take
 * the work over when its node dies (its lease expires: `adopt`).
 */
export class QueryRunner {
  private readonly jobs = new Map<string, QueryJob>();
  /** Estimated bytes held by the results of the jobs in `jobs`. */
  private readonly budget: ResultsBudget;
  /** Queries a live subscription on this node watches: never evicted, counted as live. */
  private readonly pins = new Set<string>();
  private readonly listeners = new Set<JobListener>();
  private readonly offBus: Array<() => void> = [];
  private readonly renewer: NodeJS.Timeout | null;
  /** Controllers aborted because another node took the lease: the job is refreshed, not STOPPED. */
  private readonly lostLease = new WeakSet<AbortController>();

  constructor(
    private readonly store: EventStore,
    private readonly bus: Bus<ClusterTopics>,
    private readonly jobStore: JobStore,
    private readonly opts: RunnerOptions,
  ) {
    this.budget = new ResultsBudget(opts.resultsBudgetBytes);
    const leaseMs = opts.leaseMs ?? 3000;
    this.renewer = jobStore.shared
      ? setInterval(() => {
          const ids = [...this.jobs.values()].filter((j) => j.running && this.shares(j)).map((j) => j.id);
          jobStore.renew(ids).catch(() => undefined);
        }, leaseMs / 3).unref()
      : null;
    if (!jobStore.shared) return;
    this.offBus.push(
      bus.subscribe('query-changed', (m, remote) => {
        if (remote) this.changedElsewhere(m.queryId, m.version, m.removed);
      }),
      bus.subscribe('stop-query', (m, remote) => {
        const job = this.jobs.get(m.queryId);
        if (remote && job?.running) void this.stop(job);
      }),
    );
  }

  /** Called on every change of a job in this process (partial results, final result, re-evaluation, removal). */
  onChange(listener: JobListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emitLocal(job: QueryJob) {
    for (const l of this.listeners) l(job);
  }

  /** A change computed here: told to this process, then written and announced (`final` ends the lease). */
  private emit(job: QueryJob, final = false) {
    this.emitLocal(job);
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

  /** Whether the job's state is shared with other nodes. */
  private shares(job: QueryJob): boolean {
    return this.jobStore.shared && !job.internal;
  }

  /** Runs the job store's operations on one job in order. */
  private serially<T>(job: QueryJob, op: () => Promise<T>): Promise<T> {
    const next = job.serial.then(op, op);
    job.serial = next.catch(() => undefined);
    return next;
  }

  /** Another node changed or removed a query this process holds a copy of. */
  private changedElsewhere(queryId: string, version: number, removed: boolean) {
    const job = this.jobs.get(queryId);
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
    if (this.jobs.get(job.id) !== job) return;
    this.release(job);
    job.stopped = true;
    job.controller?.abort();
    this.emitLocal(job);
  }

  /** Refreshes a copy from the shared state; this process's listeners hear of a change. */
  async follow(job: QueryJob): Promise<void> {
    if (await this.refresh(job)) this.emitLocal(job);
  }

  /**
   * Takes the shared state into a copy this process does not compute now; true when it
   * changed. `all`: read it even at the version held (results dropped here). A copy whose
   * query was removed elsewhere is forgotten (`peek` then finds nothing).
   */
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
    job.version = stored.version;
    job.status = s.status;
    job.progress = s.progress;
    job.error = s.error;
    job.baseMs = s.baseMs;
    job.window = s.window;
    job.updatedAt = s.updatedAt;
    job.stopped = s.stopped;
    job.evicted = false;
    this.hold(job, s.results);
    return true;
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
   * synchronous step that makes the job live. Refuses a user who already has
   * `maxLivePerUser` running or watched queries (429), and anyone while the results of
   * running and watched queries, which cannot be dropped, fill the results budget (503).
   * `except`: the job itself (a restart or a pin), not counted.
   */
  admit(ownerId: number, except?: QueryJob): void {
    const refusal = this.refusal(ownerId, except);
    if (refusal) throw refusal;
  }

  private refusal(ownerId: number, except?: QueryJob): AppError | null {
    // Watching a query that already counts (running, or watched elsewhere) adds nothing.
    if (except && (except.running || this.watched(except.id))) return null;
    const max = this.opts.maxLivePerUser ?? Number.POSITIVE_INFINITY;
    const budget = this.opts.resultsBudgetBytes ?? Number.POSITIVE_INFINITY;
    let live = 0;
    let kept = 0;
    for (const job of this.jobs.values()) {
      if (job === except || !(job.running || this.watched(job.id))) continue;
      kept += job.resultBytes;
      if (job.ownerId === ownerId && !job.internal) live++;
    }
    if (live >= max)
      return tooManyRequests(
        2,
        `You have ${live} queries running or watched (at most ${max}); wait for one to finish, or stop or remove one.`,
      );
    if (kept >= budget)
      return outOfMemory(
        'The results of running and watched queries fill the memory kept for query results; retry later, or stop or unsubscribe from some.',
      );
    return null;
  }

  /** Queries held in memory, by status. */
  stats(): Record<string, number> {
    const byStatus: Record<string, number> = {};
    for (const job of this.jobs.values()) byStatus[job.status] = (byStatus[job.status] ?? 0) + 1;
    return byStatus;
  }

  metrics(): MetricDecl[] {
    return [
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
  start(row: QueryRow, filter: FilterNode, opts: { internal?: boolean; adopt?: boolean } = {}): QueryJob {
    // A report's or export's query, or a dead node's work taken over, is not a user's new live query.
    if (!opts.internal && !opts.adopt) this.admit(row.owner_id);
    const job = this.make(row, filter, opts.internal ?? false);
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
  async open(row: QueryRow, filter: FilterNode, admit = true): Promise<QueryJob> {
    const job = this.make(row, filter, false);
    if (this.shares(job)) {
      const stored = await this.jobStore.load(job.id, -1);
      const held = this.jobs.get(job.id);
      if (held) return held;
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

  /** Adopts the queries whose node died mid-computation; returns how many it started. */
  async adopt(
    definition: (id: string) => Promise<{ row: QueryRow; filter: FilterNode } | null>,
  ): Promise<number> {
    if (!this.jobStore.shared) return 0;
    let n = 0;
    for (const id of await this.jobStore.orphans()) {
      if (this.jobs.get(id)?.running) continue;
      const def = await definition(id);
      if (!def) continue;
      this.start(def.row, def.filter, { adopt: true });
      n++;
    }
    return n;
  }

  private track(job: QueryJob) {
    const previous = this.jobs.get(job.id);
    if (previous) this.release(previous);
    this.jobs.set(job.id, job);
  }

  private make(row: QueryRow, filter: FilterNode, internal: boolean): QueryJob {
    const def = QUERY_TYPE_DEFS[row.type as QueryTypeName];
    const params = JSON.parse(row.params) as CommonParamValues;
    const now = Date.now();
    const job: QueryJob = {
      id: row.query_id,
      ownerId: row.owner_id,
      type: row.type as QueryTypeName,
      def,
      params,
      filter,
      createdAt: row.created_at,
      status: 'PENDING',
      results: null,
      progress: 0,
      error: null,
      baseMs: now,
      window: resolveTimeRange(params.time_range, now),
      updatedAt: new Date(now).toISOString(),
      controller: null,
      running: null,
      stopped: false,
      resultBytes: 0,
      readAt: now,
      evicted: false,
      internal,
      version: 0,
      serial: Promise.resolve(),
    };
    return job;
  }

  /**
   * Waits until the job settles or `ms` pass, whichever is first. A job another node
   * computes is followed through the shared store.
   */
  async settle(job: QueryJob, ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (!job.running && this.shares(job) && inProgress(job) && Date.now() < deadline) {
      await sleep(Math.min(50, deadline - Date.now()));
      await this.refresh(job).catch(() => undefined);
    }
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
    // Whoever computes it elsewhere stops; this node takes the lease.
    if (this.shares(job) && !job.running && inProgress(job))
      this.bus.publish('stop-query', { queryId: job.id });
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

  /** Forgets a job, interrupting its work; listeners get it one last time with status unchanged. */
  async remove(job: QueryJob): Promise<void> {
    this.release(job);
    job.stopped = true;
    job.controller?.abort();
    await job.running;
    this.emitLocal(job);
    if (this.shares(job))
      this.bus.publish('query-changed', { queryId: job.id, version: job.version, removed: true });
  }

  /**
   * The results as the API shows them (PENDING: empty). A Search page beyond the rows the
   * computation fetched runs only that page's rows, never the count again (
   * re-paging does not recompute totals).
   */
  async present(job: QueryJob, opts: PresentOptions): Promise<unknown> {
    const repage =
      job.type === 'Search' &&
      (opts.page !== undefined || opts.offset !== undefined || opts.pageSize !== undefined);
    const params = job.params as SearchParams;
    const pageSize = opts.pageSize ?? params.page_size;
    const offset = opts.offset ?? ((opts.page ?? params.page) - 1) * pageSize;
    // Positions are safe integers, which also keeps them in the engine's range.
    if (repage && !Number.isSafeInteger(offset + pageSize)) {
      const field = opts.offset !== undefined ? 'offset' : 'page';
      throw fieldError(field, `${field} is too large: the position must stay below 2^53.`);
    }
    job.readAt = Date.now();
    if (job.results === null) return {};
    let results = job.results;
    if (repage) {
      const r = job.results as SearchResult;
      const held = r.eventsOffset ?? 0;
      const covered =
        offset >= held && (offset + pageSize <= held + r.events.length || held + r.events.length >= r.total);
      if (!covered && offset < r.total) {
        const plan = Search.plan(params, job.filter, job.window);
        if (plan.kind === 'search') {
          const page = await this.store.execute({ ...plan, offset, limit: pageSize, count: false });
          results = { total: r.total, events: page.events, eventsOffset: offset } satisfies SearchResult;
        }
      }
    }
    return job.def.present(results, job.params, { ...opts, window: job.window });
  }

  private compute(job: QueryJob, reevaluation: boolean, force: boolean): void {
    job.running = this.run(job, reevaluation, force);
  }

  /**
   * Takes the job's lease (shared store): false when another node computes it (this copy
   * is refreshed instead) or a stop was asked for while its node was away (recorded).
   */
  private async lease(job: QueryJob, controller: AbortController, force: boolean): Promise<boolean> {
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

  private async run(job: QueryJob, reevaluation: boolean, force: boolean): Promise<void> {
    const controller = new AbortController();
    job.controller = controller;
    if (this.shares(job) && !(await this.lease(job, controller, force))) return;
    const baseMs = Date.now();
    const window = resolveTimeRange(job.params.time_range, baseMs);
    if (!reevaluation) {
      job.baseMs = baseMs;
      job.window = window;
      job.status = 'IN_PROGRESS';
      job.updatedAt = new Date().toISOString();
      this.emit(job);
    }
    let acc: unknown = null;
    const paged = pagedSearch(job);
    try {
      const slices = this.slices(job, window);
      for (let i = 0; i < slices.length; i++) {
        let plan = job.def.plan(job.params, job.filter, slices[i] as TimeWindow, window);
        if (paged && plan.kind === 'search') plan = { ...plan, ...paged.slice(acc as SearchResult | null) };
        const part = await this.store.execute(plan, {
          signal: controller.signal,
          onProgress: (f) => {
            if (!reevaluation) job.progress = (i + f) / slices.length;
          },
        });
        acc = paged
          ? paged.merge(acc as SearchResult | null, part as SearchResult)
          : acc === null
            ? part
            : job.def.merge(acc, part, job.params);
        if (!reevaluation && i < slices.length - 1) {
          this.hold(job, acc);
          job.progress = (i + 1) / slices.length;
          job.updatedAt = new Date().toISOString();
          this.emit(job);
        }
      }
      const changed = reevaluation && JSON.stringify(acc) !== JSON.stringify(job.results);
      this.hold(job, acc);
      job.baseMs = baseMs;
      job.window = window;
      job.status = 'SUCCESS';
      job.progress = 1;
      job.error = null;
      job.updatedAt = new Date().toISOString();
      if (!reevaluation || changed) this.emit(job, true);
      else if (this.shares(job))
        void this.serially(job, () => this.jobStore.release(job.id)).catch(() => undefined);
    } catch (err) {
      if (this.lostLease.has(controller)) {
        // Another node computes it now: this copy follows the shared state.
        if (job.controller === controller) {
          job.controller = null;
          job.running = null;
        }
        await this.refresh(job, true).catch(() => undefined);
        this.emitLocal(job);
        return;
      }
      if (controller.signal.aborted) {
        if (!reevaluation || job.status !== 'SUCCESS') {
          job.status = 'STOPPED';
          if (acc !== null) this.hold(job, acc);
        }
      } else {
        job.status = 'ERROR';
        job.error = publicMessage(err);
        this.opts.onError?.(err, job.id);
      }
      job.updatedAt = new Date().toISOString();
      this.emit(job, true);
    } finally {
      if (job.controller === controller) {
        job.controller = null;
        job.running = null;
      }
    }
  }

  /** Disjoint windows in the type's order, or the whole window when slicing does not pay. */
  private slices(job: QueryJob, w: TimeWindow): TimeWindow[] {
    const order = job.def.slicing(job.params);
    if (!order) return [w];
    const rows = this.store.estimateInRange(w.fromMs, w.toMs);
    const k = Math.min(this.opts.maxSlices, Math.ceil(rows / this.opts.sliceEvents));
    return sliceWindow(w, order, k, job.def.align?.(job.params, w) ?? 1);
  }

  /** Stops renewing leases (the process is closing; what it computes is left to the others). */
  close(): void {
    if (this.renewer) clearInterval(this.renewer);
    for (const off of this.offBus) off();
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
