import type { NormalisedEvent } from '../../core/event.js';
import type { Log } from '../../core/log.js';
import { counter, gauge, type MetricDecl } from '../../core/metrics.js';
import { and, type FilterNode } from '../../filter/ast.js';
import { parseFilter } from '../../syntax/parse-filter.js';
import { parseQuery } from '../../syntax/parse-query.js';
import type { AlertEngine } from '../alerting/index.js';
import type { TasksService } from '../tasks/tasks-service.js';
import { TriggerIndex } from './trigger-index.js';
import type { TriggersRepository } from './triggers-repository.js';
import type { TriggerRow } from './triggers-table.js';

/** A task lists at most this many event ids (the tasks API's own limit). */
const TASK_EV_IDS_MAX = 1000;

/** The filter a trigger's `query` and `filter` make together (both validated on write). */
export function compileTrigger(query: string, filter: unknown[]): FilterNode {
  return and(parseFilter(filter, { path: 'filter' }), parseQuery(query, { path: 'query' }));
}

interface PendingBatch {
  at: number;
  /** Trigger id → the ids of the events it matched. */
  hits: Map<number, string[]>;
  size: number;
}

export interface TriggerMatcherOptions {
  /** Matches of a create_task trigger within this long of its open task join it (ms). */
  taskWindowMs: number;
  /** Most matches waiting to be recorded; beyond it new matches are dropped and counted. */
  maxPendingMatches: number;
  /** Where recording failures, drops and skipped triggers are told. */
  log: Log;
}

/**
 * Matching of every committed event against every enabled trigger. Matching is synchronous
 * and in memory (a TriggerIndex); what a threshold or notifying trigger matched is counted
 * by the alert engine. Recording the matches and opening or extending tasks runs behind
 * it, one batch at a time, so ingest acknowledgements never wait for the metadata store.
 */
export class TriggerMatcher {
  private index = new TriggerIndex([]);
  private rows = new Map<number, TriggerRow>();
  private queue: PendingBatch[] = [];
  private pending = 0;
  private draining: Promise<void> | null = null;
  /** Matches dropped because too many waited to be recorded. */
  dropped = 0;
  private recorded = 0;

  constructor(
    private readonly repo: TriggersRepository,
    private readonly tasks: TasksService,
    private readonly alerts: AlertEngine,
    private readonly opts: TriggerMatcherOptions,
    private readonly now: () => Date,
  ) {}

  /**
   * The enabled triggers, as read from the store, each with the filter it matches by:
   * `filterOf` its own within what its owner may read. One that no longer parses is skipped.
   */
  setTriggers(rows: readonly TriggerRow[], filterOf: (row: TriggerRow) => FilterNode): void {
    const compiled = rows.flatMap((r) => {
      try {
        return [{ id: r.id, filter: filterOf(r) }];
      } catch (err) {
        // Stored triggers were valid when written; a later, stricter parser must not stop ingest.
        this.opts.log.warn({ trigger_id: r.id, err: String(err) }, 'trigger no longer valid; skipped');
        return [];
      }
    });
    this.rows = new Map(rows.map((r) => [r.id, r]));
    this.index = new TriggerIndex(compiled);
  }

  /**
   * Matches committed events against the enabled triggers (called by the batcher after
   * each durable commit) and queues what matched for recording.
   */
  matchCommitted(events: readonly NormalisedEvent[]): void {
    if (this.index.size === 0) return;
    const hits = new Map<number, string[]>();
    const watched = new Map<number, NormalisedEvent[]>();
    let size = 0;
    for (const e of events) {
      for (const id of this.index.match(e)) {
        if (this.alerts.watches(id)) {
          const list = watched.get(id);
          if (list) list.push(e);
          else watched.set(id, [e]);
          // A threshold counts events; it records no match per event (its firing may open a task).
          if (this.alerts.isThreshold(id)) continue;
        }
        const list = hits.get(id);
        if (list) list.push(e.ev_id);
        else hits.set(id, [e.ev_id]);
        size++;
      }
    }
    if (watched.size > 0) this.alerts.observe(watched);
    if (size === 0) return;
    if (this.pending + size > this.opts.maxPendingMatches) {
      if (this.dropped === 0)
        this.opts.log.warn({}, 'trigger matches arrive faster than they are recorded; dropping');
      this.dropped += size;
      return;
    }
    this.pending += size;
    this.queue.push({ at: this.now().getTime(), hits, size });
    this.draining ??= this.drain().finally(() => {
      this.draining = null;
    });
  }

  /** Counts since start. */
  stats() {
    return {
      enabled: this.index.size,
      recorded: this.recorded,
      pending: this.pending,
      dropped: this.dropped,
    };
  }

  metrics(): MetricDecl[] {
    return [
      gauge('logscope_triggers_enabled', 'Enabled triggers matched on ingest.', () => this.index.size),
      counter('logscope_trigger_matches_total', 'Trigger matches recorded.', () => this.recorded),
      counter(
        'logscope_trigger_matches_dropped_total',
        'Trigger matches dropped (recording fell behind).',
        () => this.dropped,
      ),
      gauge(
        'logscope_trigger_matches_pending',
        'Trigger matches waiting to be recorded.',
        () => this.pending,
      ),
    ];
  }

  /** Resolves once every queued match is recorded (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /**
   * A threshold's firing with create_task: the task of its samples, if the trigger is still
   * enabled (see `taskFor`).
   */
  async taskOfFiring(triggerId: number, evIds: string[], at: number): Promise<void> {
    const row = this.rows.get(triggerId);
    if (row) await this.taskFor(row, evIds, at);
  }

  private async drain(): Promise<void> {
    for (let batch = this.queue.shift(); batch; batch = this.queue.shift()) {
      try {
        await this.record(batch);
      } catch (err) {
        this.opts.log.warn({ err: String(err), matches: batch.size }, 'trigger matches not recorded');
      } finally {
        this.pending -= batch.size;
      }
    }
  }

  private async record(batch: PendingBatch): Promise<void> {
    const matchedAt = new Date(batch.at).toISOString();
    const rows = [];
    for (const [triggerId, evIds] of batch.hits) {
      const trigger = this.rows.get(triggerId);
      if (!trigger) continue; // deleted or disabled since it matched
      const taskId = trigger.create_task === 1 ? await this.taskFor(trigger, evIds, batch.at) : null;
      for (const ev_id of evIds)
        rows.push({ trigger_id: triggerId, ev_id, matched_at: matchedAt, task_id: taskId });
    }
    await this.repo.insertMatches(rows);
    this.recorded += rows.length;
  }

  /**
   * The open task of this trigger that matched within the window gets the new event
   * ids (up to the 1,000 a task lists); otherwise a new task is opened, owned by the
   * trigger's owner and assigned to its `assign_to`.
   */
  private async taskFor(trigger: TriggerRow, evIds: string[], at: number): Promise<number> {
    const since = new Date(at - this.opts.taskWindowMs).toISOString();
    const open =
      this.opts.taskWindowMs > 0 ? await this.tasks.openTaskOfTrigger(trigger.id, since) : undefined;
    if (open) {
      await this.tasks.addEvents(open, evIds, TASK_EV_IDS_MAX);
      return open.id;
    }
    const query = [trigger.query, trigger.filter !== '[]' ? `filter ${trigger.filter}` : '']
      .filter(Boolean)
      .join('; ');
    return this.tasks.openForTrigger(
      trigger.owner_id,
      {
        title: `Trigger "${trigger.name}" matched`.slice(0, 200),
        description: [trigger.description, `Matched by: ${query}`].filter(Boolean).join('\n\n'),
        assigned_to: trigger.assign_to,
        priority: trigger.severity,
        ev_ids: evIds.slice(0, TASK_EV_IDS_MAX),
      },
      trigger.id,
    );
  }
}
