import type { QueryRunner } from '../../query/runner.js';
import { isRelative, resolveTimeRange } from '../../query/time-range.js';

export interface SchedulerOptions {
  /** Least time between two re-evaluations of a watched relative query (ms). */
  refreshMs: number;
  /** Least time between two new-data re-evaluations of a watched Search, and after another node's commit (ms). */
  tailMs: number;
  /** Most re-evaluations at once (the rest wait their turn); default 2. */
  maxEvaluations?: number;
  /** Cluster mode: whether the bus reaches the other nodes now (else the watched copies are polled). */
  busConnected?: () => boolean;
}

/**
 * The re-evaluation scheduler of the live hub: watched relative-time queries are
 * re-evaluated as time passes (every refresh interval, a widget's own where it sets one)
 * and after new data (throttled), a few at a time. In a cluster the job's lease makes one
 * node compute for all; the others follow the shared state.
 */
export class ReevaluationScheduler {
  private readonly lastEval = new Map<string, number>();
  /** Widget refresh intervals of watched queries (ms), where a widget sets one. */
  private readonly refreshOf = new Map<string, number>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  /** Re-evaluations waiting for a turn (each query once), and how many run. */
  private readonly due = new Set<string>();
  private evaluating = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly runner: QueryRunner,
    /** The queries somebody watches on this node. */
    private readonly watched: { watched(): Iterable<string>; has(queryId: string): boolean },
    private readonly opts: SchedulerOptions,
  ) {
    this.timer = setInterval(() => this.tick(), Math.min(1000, opts.refreshMs)).unref();
  }

  setRefresh(queryId: string, ms: number): void {
    this.refreshOf.set(queryId, ms);
  }

  refreshMs(queryId: string): number {
    return this.refreshOf.get(queryId) ?? this.opts.refreshMs;
  }

  /** Nobody watches the query any more. */
  forget(queryId: string): void {
    this.refreshOf.delete(queryId);
    clearTimeout(this.pending.get(queryId));
    this.pending.delete(queryId);
  }

  isPending(queryId: string): boolean {
    return this.pending.has(queryId);
  }

  /** A re-evaluation of `queryId` at least `gap` ms after its last one. */
  after(queryId: string, gap: number, now = Date.now()): void {
    if (this.pending.has(queryId)) return;
    const wait = Math.max(0, (this.lastEval.get(queryId) ?? 0) + gap - now);
    this.pending.set(
      queryId,
      setTimeout(() => {
        this.pending.delete(queryId);
        this.enqueue(queryId);
      }, wait),
    );
  }

  /**
   * Another node committed events (a summary: count and time bounds). Watched relative
   * queries whose window they touch are re-evaluated, throttled like a live tail.
   */
  committedElsewhere(commit: { count: number; fromMs: number; toMs: number }): void {
    const now = Date.now();
    for (const queryId of this.watched.watched()) {
      const job = this.runner.peek(queryId);
      if (!job || job.stopped || !isRelative(job.params.time_range)) continue;
      const window = resolveTimeRange(job.params.time_range, now);
      if (commit.toMs < window.fromMs || commit.fromMs >= window.toMs) continue;
      this.after(queryId, this.opts.tailMs, now);
    }
  }

  /**
   * Queues a re-evaluation. A few run at once: a tick that finds every watched query due
   * must not start them all together (a burst of engine connections and statements that
   * starves ingest); the others wait their turn, each query at most once.
   */
  private enqueue(queryId: string) {
    this.due.add(queryId);
    this.drain();
  }

  private drain() {
    for (const queryId of this.due) {
      if (this.evaluating >= (this.opts.maxEvaluations ?? 2)) return;
      this.due.delete(queryId);
      const job = this.runner.peek(queryId);
      if (!job || !this.watched.has(queryId)) continue;
      this.lastEval.set(queryId, Date.now());
      this.runner.reevaluate(job);
      const running = job.running;
      if (!running) continue;
      this.evaluating++;
      void running.finally(() => {
        this.evaluating--;
        this.drain();
      });
    }
  }

  /** Time passes: watched relative queries are re-evaluated at least every refresh interval. */
  private tick() {
    const now = Date.now();
    if (this.opts.busConnected && !this.opts.busConnected()) this.poll();
    for (const queryId of this.watched.watched()) {
      const job = this.runner.peek(queryId);
      if (!job || job.stopped || !isRelative(job.params.time_range)) continue;
      if (now - (this.lastEval.get(queryId) ?? job.baseMs) >= this.refreshMs(queryId)) this.enqueue(queryId);
    }
  }

  /** The bus is down: watched queries other nodes compute are read from the shared store. */
  private poll() {
    for (const queryId of this.watched.watched()) {
      const job = this.runner.peek(queryId);
      if (!job || job.running) continue;
      this.runner.follow(job).catch(() => undefined);
    }
  }

  close(): void {
    clearInterval(this.timer);
    for (const t of this.pending.values()) clearTimeout(t);
    this.pending.clear();
    this.due.clear();
  }
}
