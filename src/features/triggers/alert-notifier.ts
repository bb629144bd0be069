import type { Log } from '../../core/log.js';
import { counter, type MetricDecl } from '../../core/metrics.js';
import type { EventStore } from '../../event-store/event-store.js';
import type { ReadScope } from '../../event-store/read-scope.js';
import type { FilterNode } from '../../filter/ast.js';
import type { LeasesRepository } from '../../metadata/leases-repository.js';
import type { ChannelsService } from '../alerting/channels-service.js';
import {
  type AlertCounts,
  AlertEngine,
  type AlertEngineOptions,
  type AlertTrigger,
  type Condition,
  type DeliveryQueue,
  type Firing,
  MAX_FIRINGS_PER_WINDOW,
  type PatternRateCondition,
  PatternRateJudge,
  storeReads,
} from '../alerting/index.js';
import type { TriggerRow } from './triggers-table.js';

/** The lease of the node that sends a cluster's notifications. */
const NOTIFIER_LEASE = 'alert-notifier';
/** Cluster mode: how often matches are published and windows slide (ms). */
const SHARE_EVERY_MS = 250;

/** Where firings go: the channels, through the durable queue. */
export interface Alerting {
  channels: ChannelsService;
  queue: DeliveryQueue;
  /** The web UI's address, for the Search link of a notification. */
  linkBase: () => string;
}

/**
 * Cluster mode: every node counts every node's matches (shared on the bus), and the
 * holder of the `alert-notifier` lease sends the notifications.
 */
export interface AlertCluster {
  node: string;
  leases: LeasesRepository;
  /** How long the notifier's lease lasts without renewal (ms). */
  leaseMs: number;
  publish: (counts: AlertCounts) => void;
}

export interface AlertNotifierOptions {
  /** Where notifications not queued and lease failures are told. */
  log: Log;
  cluster?: AlertCluster | undefined;
  /** Patterns, for new_pattern conditions and pattern_rate templates (features/patterns). */
  patterns?: AlertEngineOptions['patterns'] & {
    templates(ids: readonly string[]): Promise<Map<string, string>>;
  };
  /** pattern_rate conditions: the store their windows are counted in, and how long after a window ends (ms). */
  patternRate?: { events: EventStore; settleMs: number };
}

/** What a pattern_rate trigger counts: its filter, within the scope of those whose rights it runs with. */
export interface TriggerReads {
  filter: FilterNode;
  scope: ReadScope;
}

/** Opens or extends the task of a create_task threshold's firing (the matcher's tasks). */
export type FiringTask = (triggerId: number, evIds: string[], at: number) => Promise<void>;

/**
 * Turns the alert engine's firings into notifications: a durable delivery per channel of
 * the trigger (and, for a create_task threshold, a task of its samples). It runs the clock
 * that slides the engine's windows and, in a cluster, holds the notifier's lease.
 */
export class AlertNotifier {
  /** Conditions and notifications of the enabled triggers. */
  readonly engine: AlertEngine;
  /** pattern_rate conditions: windows judged by counting in the event store. */
  readonly patternRate: PatternRateJudge;
  private ticker: NodeJS.Timeout | undefined;
  /**
   * Cluster mode: until when (this node's clock, ms) it holds the notifier's lease, a
   * second short of the lease itself, so a renewal that hangs never lets two nodes send.
   */
  private notifierUntil = 0;
  private renewing: Promise<void> | null = null;
  /** Whose rights each enabled trigger runs with: its deliveries show their samples to them. */
  private runAs = new Map<number, number | null>();

  constructor(
    private readonly alerting: Alerting,
    private readonly opts: AlertNotifierOptions,
    private readonly now: () => Date,
    private readonly taskOf: FiringTask,
  ) {
    const cluster = opts.cluster;
    this.engine = new AlertEngine({
      now: () => this.now().getTime(),
      linkBase: () => alerting.linkBase(),
      ...(opts.patterns ? { patterns: opts.patterns } : {}),
      // A second is judged once every node's counts of it are in: they are published within
      // SHARE_EVERY_MS of its end and cross the bus well within another SHARE_EVERY_MS.
      ...(cluster
        ? {
            share: { publish: cluster.publish, lagMs: 1000 + 2 * SHARE_EVERY_MS },
            sends: () => this.notifier,
          }
        : {}),
      onFiring: (f) => this.queue(f),
    });
    this.patternRate = new PatternRateJudge({
      now: () => this.now().getTime(),
      settleMs: opts.patternRate?.settleMs ?? 5000,
      // In a cluster the notifier judges: it alone counts, so a window is judged once.
      sends: () => this.notifier,
      templates: (ids) => opts.patterns?.templates(ids) ?? Promise.resolve(new Map()),
      linkBase: () => alerting.linkBase(),
      onFiring: (f) => this.queue(f),
      onError: (id, err) =>
        this.opts.log.warn({ trigger_id: id, err: String(err) }, 'pattern_rate window not judged'),
    });
  }

  private queue(f: Firing): void {
    this.onFiring(f).catch((err: unknown) =>
      this.opts.log.warn({ err: String(err) }, 'notification not queued'),
    );
  }

  metrics(): MetricDecl[] {
    return [
      counter(
        'logscope_pattern_rate_suppressed_total',
        `pattern_rate firings not notified because ${MAX_FIRINGS_PER_WINDOW} others of the same trigger and window scored higher.`,
        () => this.patternRate.suppressed,
      ),
      counter(
        'logscope_pattern_rate_windows_judged_total',
        'Windows of pattern_rate triggers judged (counted in the event store).',
        () => this.patternRate.judged,
      ),
    ];
  }

  /**
   * The enabled triggers, as read from the store, with the key of the scopes each matches
   * within: a trigger whose rights changed (its own, or a channel's new decider) starts
   * afresh, so nothing gathered under the old ones is sent under the new.
   */
  setTriggers(
    rows: readonly TriggerRow[],
    scopeKeyOf: (id: number) => string,
    readsOf: (id: number) => TriggerReads | undefined = () => undefined,
  ): void {
    this.runAs = new Map(rows.map((r) => [r.id, r.run_as]));
    const rated = rows.filter(isPatternRate);
    this.engine.setTriggers(
      rows.filter((r) => !isPatternRate(r)).map((r) => alertTrigger(r, scopeKeyOf(r.id))),
    );
    const events = this.opts.patternRate?.events;
    this.patternRate.setTriggers(
      rated.flatMap((r) => {
        const reads = readsOf(r.id);
        if (!events || !reads) return [];
        const trigger = alertTrigger(r, scopeKeyOf(r.id));
        return [
          {
            trigger,
            condition: trigger.condition as PatternRateCondition,
            reads: storeReads(events, reads.filter, reads.scope),
            version: JSON.stringify([r.condition, r.query, r.filter, reads.scope.key]),
          },
        ];
      }),
    );
  }

  /**
   * Starts the clock that slides threshold windows (silence, recoveries) once a second. In a
   * cluster it also publishes this node's matches and keeps trying for (or renewing) the
   * notifier's lease, first before it returns, so a lone node sends from its start.
   */
  async start(): Promise<void> {
    const cluster = this.opts.cluster;
    if (this.ticker) return;
    if (!cluster) {
      this.ticker = setInterval(() => {
        this.engine.tick();
        void this.patternRate.tick();
      }, 1000).unref();
      return;
    }
    await this.holdNotifierLease();
    let sinceLease = 0;
    this.ticker = setInterval(() => {
      this.engine.flush();
      this.engine.tick();
      void this.patternRate.tick();
      sinceLease += SHARE_EVERY_MS;
      if (sinceLease >= cluster.leaseMs / 3 && !this.renewing) {
        sinceLease = 0;
        this.renewing = this.holdNotifierLease().finally(() => {
          this.renewing = null;
        });
      }
    }, SHARE_EVERY_MS).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.ticker);
    this.ticker = undefined;
    // A window being judged is told before the stores close.
    await this.patternRate.idle();
    const c = this.opts.cluster;
    if (!c) return;
    this.engine.flush();
    await this.renewing;
    if (this.notifierUntil > 0) {
      this.notifierUntil = 0;
      // Another node takes over at once instead of after the lease runs out.
      await c.leases.release(NOTIFIER_LEASE, c.node).catch(() => undefined);
    }
  }

  /** Whether this node sends notifications (always, alone; the lease holder in a cluster). */
  private get notifier(): boolean {
    return !this.opts.cluster || this.now().getTime() < this.notifierUntil;
  }

  private async holdNotifierLease(): Promise<void> {
    const c = this.opts.cluster;
    if (!c) return;
    try {
      const now = this.now().getTime();
      const held = await c.leases.hold(NOTIFIER_LEASE, c.node, now, c.leaseMs);
      this.notifierUntil = held ? now + c.leaseMs - 1000 : 0;
    } catch (err) {
      this.notifierUntil = 0;
      this.opts.log.warn({ err: String(err) }, 'notifier lease not renewed');
    }
  }

  /** A firing: a delivery per channel (durable), and with create_task a task of its samples. */
  private async onFiring(f: Firing): Promise<void> {
    const t = f.trigger;
    await this.alerting.queue.enqueue(f.notification, t.id, t.notify, this.runAs.get(t.id) ?? null);
    if (t.create_task && t.condition.type === 'threshold' && f.notification.kind === 'fire') {
      await this.taskOf(t.id, f.evIds, this.now().getTime());
    }
  }
}

const isPatternRate = (row: TriggerRow) => (JSON.parse(row.condition) as Condition).type === 'pattern_rate';

const alertTrigger = (row: TriggerRow, scopeKey: string): AlertTrigger => ({
  id: row.id,
  name: row.name,
  severity: row.severity,
  description: row.description,
  query: row.query,
  condition: JSON.parse(row.condition) as Condition,
  notify: JSON.parse(row.notify) as number[],
  cooldown_seconds: row.cooldown_seconds,
  create_task: row.create_task === 1,
  version: `${row.updated_at} ${scopeKey}`,
  createdAtMs: Date.parse(row.created_at),
});
