import type { Log } from '../../core/log.js';
import type { MetricDecl, MetricsSource } from '../../core/metrics.js';
import type { EventStore } from '../../event-store/event-store.js';
import { streamRules } from './membership.js';
import type { StreamsRepository } from './streams-repository.js';

/**
 * Gives the event store the streams' rules (ADR 0016): at start and whenever streams
 * change on any node, so a store that keeps each event's membership writes it. Reads are
 * right throughout (a scope is read by its filter until the membership is written);
 * `logscope_stream_membership_pending` says whether a write is under way.
 */
export class StreamMembership implements MetricsSource {
  private pending = 0;
  /** Updates one after another, so the rules read last are the ones given last. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly streams: StreamsRepository,
    private readonly events: EventStore,
    private readonly log: Log,
  ) {}

  update(): Promise<void> {
    this.pending++;
    this.queue = this.queue.then(() => this.updateNow());
    return this.queue;
  }

  private async updateNow(): Promise<void> {
    try {
      await this.events.setStreamRules(streamRules(await this.streams.all()));
    } catch (err) {
      // Scopes keep being read by their filters; the next change of streams tries again.
      this.log.warn({ err }, 'stream membership could not be written; scopes are read by their rules');
    } finally {
      this.pending--;
    }
  }

  metrics(): MetricDecl[] {
    return [
      {
        name: 'logscope_stream_membership_pending',
        help: "1 while the event store writes stored events' stream membership under new stream rules",
        type: 'gauge',
        read: () => (this.pending > 0 ? 1 : 0),
      },
    ];
  }
}
