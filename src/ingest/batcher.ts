import type { NormalisedEvent } from '../core/event.js';
import { counter, gauge, type MetricDecl } from '../core/metrics.js';
import { unavailable } from '../errors/errors.js';
import type { EventStore } from '../event-store/event-store.js';

export interface BatcherOptions {
  /** Commit at least this often while events wait (ms). */
  intervalMs: number;
  /** Commit as soon as this many events wait. */
  maxBatchEvents: number;
  /** Refuse new work (503 + Retry-After) beyond this many waiting events. */
  maxQueuedEvents: number;
}

interface Pending {
  events: readonly NormalisedEvent[];
  resolve: (r: { storedAt: number }) => void;
  reject: (e: unknown) => void;
}

export type CommitListener = (events: readonly NormalisedEvent[], storedAt: number) => void;

/**
 * Commits handed to the store at once. The store (a worker thread) takes them in order;
 * while it writes one, the next gathers and waits there, so the main thread parses and
 * normalises while the worker writes and neither waits for the other.
 */
const MAX_IN_FLIGHT = 2;

/**
 * Group commit: requests hand over their events and wait; waiting events go to the store
 * in one append at most every `intervalMs` (sooner at `maxBatchEvents`), up to
 * `MAX_IN_FLIGHT` appends at a time, and each request is answered once its append is
 * durable. Appends commit in the order they were handed over, and listeners hear of them
 * in that order. Memory stays bounded by `maxQueuedEvents`.
 */
export class Batcher {
  private queue: Pending[] = [];
  /** Events waiting or being committed (the bound counts both). */
  private queued = 0;
  /** Events waiting to be handed to the store. */
  private waiting = 0;
  private timer: NodeJS.Timeout | null = null;
  private inFlight = 0;
  /** Resolved when nothing is in flight (close waits on it). */
  private drained: (() => void) | null = null;
  /** The last handed-over append, so listeners run in commit order. */
  private lastCommit: Promise<void> = Promise.resolve();
  private closed = false;
  private lastCommitAt = 0;
  private readonly listeners: CommitListener[] = [];
  private readonly counts = { committedEvents: 0, commits: 0, commitSeconds: 0, failedCommits: 0 };

  constructor(
    private readonly store: EventStore,
    private readonly opts: BatcherOptions,
  ) {}

  /** Called after every durable commit, e.g. to wake live queries or count metrics. */
  onCommit(listener: CommitListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  get queuedEvents(): number {
    return this.queued;
  }

  /** Totals since start. */
  stats() {
    return { queuedEvents: this.queued, ...this.counts };
  }

  metrics(): MetricDecl[] {
    return [
      counter(
        'logscope_ingest_events_total',
        'Events committed to the event store.',
        () => this.counts.committedEvents,
      ),
      counter(
        'logscope_ingest_commits_total',
        'Group commits to the event store.',
        () => this.counts.commits,
      ),
      counter(
        'logscope_ingest_commit_seconds_total',
        'Time spent in group commits.',
        () => this.counts.commitSeconds,
      ),
      counter(
        'logscope_ingest_failed_commits_total',
        'Group commits that failed.',
        () => this.counts.failedCommits,
      ),
      gauge('logscope_ingest_queued_events', 'Events waiting for a commit.', () => this.queued),
    ];
  }

  /**
   * Queues events (the bound counts events, i.e. records) and resolves once they are
   * committed. `admitted`: a later piece of a request whose first piece was accepted;
   * it is not refused for a full queue, so a request is refused whole or not at all.
   */
  submit(
    events: readonly NormalisedEvent[],
    options: { admitted?: boolean } = {},
  ): Promise<{ storedAt: number }> {
    if (this.closed) return Promise.reject(unavailable('The server is shutting down.', 5));
    if (events.length === 0) return Promise.resolve({ storedAt: Date.now() });
    if (!options.admitted && this.queued > 0 && this.queued + events.length > this.opts.maxQueuedEvents) {
      return Promise.reject(unavailable('Ingest queue is full; retry shortly.', 1));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ events, resolve, reject });
      this.queued += events.length;
      this.waiting += events.length;
      this.schedule();
    });
  }

  /**
   * At most one commit per interval: when the last one started longer ago than that (an
   * idle store), commit on the next turn of the event loop, so a lone request is not kept
   * waiting; under load, what arrives meanwhile gathers into the next batch, handed over
   * at once when it reaches `maxBatchEvents`.
   */
  private schedule(): void {
    if (!this.queue.length || this.inFlight >= MAX_IN_FLIGHT) return;
    if (this.closed || this.waiting >= this.opts.maxBatchEvents) {
      this.kick();
      return;
    }
    if (this.timer) return;
    const delay = Math.max(0, this.lastCommitAt + this.opts.intervalMs - Date.now());
    this.timer = setTimeout(() => this.kick(), delay);
  }

  private kick(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (!this.queue.length || this.inFlight >= MAX_IN_FLIGHT) return;
    const batch = this.queue;
    this.queue = [];
    this.waiting = 0;
    this.lastCommitAt = Date.now();
    void this.commit(batch);
  }

  private async commit(batch: Pending[]): Promise<void> {
    this.inFlight++;
    const events = batch.length === 1 ? (batch[0] as Pending).events : batch.flatMap((p) => p.events);
    const started = performance.now();
    // Handed over now (the store keeps the order); answered in order after the previous one.
    const appended = this.store.append(events);
    const previous = this.lastCommit;
    let done!: () => void;
    this.lastCommit = new Promise<void>((r) => {
      done = r;
    });
    try {
      const result = await appended.then(
        (r) => ({ ok: true as const, storedAt: r.storedAt }),
        (err: unknown) => ({ ok: false as const, err }),
      );
      await previous;
      this.queued -= events.length;
      if (result.ok) {
        this.counts.commits++;
        this.counts.committedEvents += events.length;
        this.counts.commitSeconds += (performance.now() - started) / 1000;
        for (const p of batch) p.resolve({ storedAt: result.storedAt });
        for (const l of this.listeners) l(events, result.storedAt);
      } else {
        this.counts.failedCommits++;
        for (const p of batch) p.reject(result.err);
      }
    } finally {
      done();
      this.inFlight--;
      if (this.inFlight === 0 && this.drained) this.drained();
      this.schedule();
    }
  }

  /** Commits what waits and refuses new work. */
  async close(): Promise<void> {
    this.closed = true;
    this.schedule();
    while (this.inFlight > 0 || this.queue.length) {
      await new Promise<void>((r) => {
        this.drained = r;
      });
      this.drained = null;
      this.schedule();
    }
  }
}
