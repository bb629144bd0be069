import type { NormalisedEvent } from '../core/event.js';
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
 * Group commit: requests hand over their events and wait; all waiting events go to the
 * store in one append at most every `intervalMs` (sooner at `maxBatchEvents`), and each
 * request is answered once that append is durable. Memory stays bounded by
 * `maxQueuedEvents`.
 */
export class Batcher {
  private queue: Pending[] = [];
  private queued = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private closed = false;
  private lastCommitAt = 0;
  private readonly listeners: CommitListener[] = [];
  private readonly counts = { committedEvents: 0, commits: 0, commitSeconds: 0, failedCommits: 0 };

  constructor(
    private readonly store: EventStore,
    private readonly opts: BatcherOptions,
  ) {}

  /** Called after every durable commit, e.g. to wake live queries or count metrics. */
  onCommit(listener: CommitListener): void {
    this.listeners.push(listener);
  }

  get queuedEvents(): number {
    return this.queued;
  }

  /** Totals since start, for /metrics. */
  stats() {
    return { queuedEvents: this.queued, ...this.counts };
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
      if (this.queued >= this.opts.maxBatchEvents) this.kick();
      else this.schedule();
    });
  }

  /**
   * At most one commit per interval: when the last one is older than that (an idle
   * store), commit on the next turn of the event loop, so a lone request is not kept
   * waiting; under load, what arrives meanwhile gathers into the next batch.
   */
  private schedule(): void {
    if (this.timer || this.flushing) return;
    const delay = Math.max(0, this.lastCommitAt + this.opts.intervalMs - Date.now());
    this.timer = setTimeout(() => this.kick(), delay);
  }

  private kick(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    // One commit at a time; events arriving meanwhile form the next batch.
    if (this.flushing) return;
    this.flushing = this.flushLoop().finally(() => {
      this.flushing = null;
    });
  }

  private async flushLoop(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue;
      this.queue = [];
      const events = batch.length === 1 ? (batch[0] as Pending).events : batch.flatMap((p) => p.events);
      const started = performance.now();
      try {
        const { storedAt } = await this.store.append(events);
        this.lastCommitAt = Date.now();
        this.queued -= events.length;
        this.counts.commits++;
        this.counts.committedEvents += events.length;
        this.counts.commitSeconds += (performance.now() - started) / 1000;
        for (const p of batch) p.resolve({ storedAt });
        for (const l of this.listeners) l(events, storedAt);
      } catch (err) {
        this.queued -= events.length;
        this.counts.failedCommits++;
        for (const p of batch) p.reject(err);
      }
      // Let the next batch gather for an interval, unless it is already large.
      if (this.queue.length && this.queued < this.opts.maxBatchEvents) {
        this.timer ??= setTimeout(() => this.kick(), this.opts.intervalMs);
        return;
      }
    }
  }

  /** Commits what waits and refuses new work. */
  async close(): Promise<void> {
    this.closed = true;
    this.kick();
    while (this.flushing) await this.flushing;
  }
}
