import type { NormalisedEvent } from '../../core/event.js';
import type { Page, PageRequest } from '../../core/list.js';
import type { Log } from '../../core/log.js';
import { counter, gauge, type MetricDecl } from '../../core/metrics.js';
import { AppError, type FieldErrors, notFound, validationError } from '../../errors/errors.js';
import { and, type FilterNode } from '../../filter/ast.js';
import { checkFieldName } from '../../filter/conditions.js';
import { parseQuery } from '../../filter/language/parse-query.js';
import { parseFilter } from '../../filter/parse-filter.js';
import type { LeasesRepository } from '../../metadata/leases-repository.js';
import type { TaskPriority, TriggerRow, TriggerUpdate } from '../../metadata/schema.js';
import type { TriggersRepository } from '../../metadata/triggers-repository.js';
import type { UsersRepository } from '../../metadata/users-repository.js';
import {
  type AlertCounts,
  AlertEngine,
  type AlertTrigger,
  type Condition,
  type Firing,
} from '../alerts/alert-engine.js';
import type { ChannelsService } from '../alerts/channels-service.js';
import type { DeliveryQueue } from '../alerts/delivery-queue.js';
import type { ThresholdCondition } from '../alerts/threshold.js';
import { can, type Identity } from '../auth/identity.js';
import type { TasksService } from '../tasks/tasks-service.js';
import { TriggerIndex } from './trigger-index.js';

/** Trigger representation. */
export interface Trigger {
  id: number;
  name: string;
  description: string;
  severity: TaskPriority;
  query: string;
  filter: unknown[];
  enabled: boolean;
  create_task: boolean;
  assign_to: number | null;
  /** Every matching event (`match`), or a threshold over a sliding window. */
  condition: Condition;
  /** Channel ids told when it fires. */
  notify: number[];
  cooldown_seconds: number;
  owner: number;
  created_at: string;
  updated_at: string;
}

/** The writable fields (all optional for PATCH; PUT resets omitted ones to defaults). */
export interface TriggerInput {
  name?: string | undefined;
  description?: string | undefined;
  severity?: TaskPriority | undefined;
  query?: string | undefined;
  filter?: unknown[] | undefined;
  enabled?: boolean | undefined;
  create_task?: boolean | undefined;
  assign_to?: number | null | undefined;
  /** `group_by` may be left out on input: no grouping. */
  condition?: ConditionInput | undefined;
  notify?: number[] | undefined;
  cooldown_seconds?: number | undefined;
}

export type FullTriggerInput = TriggerInput & { name: string };

/** One trigger an event matched; `matched_at` in Unix seconds. */
export interface TriggerMatch {
  trigger_id: number;
  name: string;
  severity: string;
  description: string;
  matched_at: number;
  task_id: number | null;
}

/** A condition as a client sends it: a threshold's `group_by` is optional. */
export type ConditionInput =
  | { type: 'match' }
  | (Omit<ThresholdCondition, 'group_by'> & { group_by?: string[] | undefined });

export interface TriggersServiceOptions {
  /** Matches of a create_task trigger within this long of its open task join it (ms). */
  taskWindowMs: number;
  /** Most matches waiting to be recorded; beyond it new matches are dropped and counted. */
  maxPendingMatches: number;
  /** Triggers one user may own. */
  maxPerUser: number;
  /** Where recording failures, drops and skipped triggers are told. */
  log: Log;
  /** Told after this process changed triggers (cluster: the other nodes reload theirs). */
  onChanged?: () => void;
  /**
   * Cluster mode: every node counts every node's matches (shared on the bus), and the
   * holder of the `alert-notifier` lease sends the notifications.
   */
  cluster?: {
    node: string;
    leases: LeasesRepository;
    /** How long the notifier's lease lasts without renewal (ms). */
    leaseMs: number;
    publish: (counts: AlertCounts) => void;
  };
}

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

/** Seconds between two notifications of one trigger and group, unless told. */
export const DEFAULT_COOLDOWN_SECONDS = 300;

/** A task lists at most this many event ids (the tasks API's own limit). */
const TASK_EV_IDS_MAX = 1000;

const withDefaults = (input: FullTriggerInput): Required<TriggerInput> => ({
  name: input.name,
  description: input.description ?? '',
  severity: input.severity ?? 'medium',
  query: input.query ?? '',
  filter: input.filter ?? [],
  enabled: input.enabled ?? true,
  create_task: input.create_task ?? false,
  assign_to: input.assign_to ?? null,
  condition: input.condition ?? { type: 'match' },
  notify: input.notify ?? [],
  cooldown_seconds: input.cooldown_seconds ?? DEFAULT_COOLDOWN_SECONDS,
});

const present = (row: TriggerRow): Trigger => ({
  id: row.id,
  name: row.name,
  description: row.description,
  severity: row.severity,
  query: row.query,
  filter: JSON.parse(row.filter) as unknown[],
  enabled: row.enabled === 1,
  create_task: row.create_task === 1,
  assign_to: row.assign_to,
  condition: JSON.parse(row.condition) as Condition,
  notify: JSON.parse(row.notify) as number[],
  cooldown_seconds: row.cooldown_seconds,
  owner: row.owner_id,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/** The filter a trigger's `query` and `filter` make together (both validated on write). */
function compileTrigger(query: string, filter: unknown[]): FilterNode {
  return and(parseFilter(filter, { path: 'filter' }), parseQuery(query, { path: 'query' }));
}

interface PendingBatch {
  at: number;
  /** Trigger id → the ids of the events it matched. */
  hits: Map<number, string[]>;
  size: number;
}

/**
 * Triggers: CRUD with the ownership rules of dashboards (owner; `manage_triggers` holders
 * and admins see and change all), and matching of every committed event against every
 * enabled trigger. Matching is synchronous and in memory (a TriggerIndex); recording the
 * matches and opening or extending tasks runs behind it, one batch at a time, so ingest
 * acknowledgements never wait for the metadata store.
 */
export class TriggersService {
  private index = new TriggerIndex([]);
  private rows = new Map<number, TriggerRow>();
  private queue: PendingBatch[] = [];
  private pending = 0;
  private draining: Promise<void> | null = null;
  private loading: Promise<void> = Promise.resolve();
  /** Matches dropped because too many waited to be recorded. */
  dropped = 0;
  private recorded = 0;
  /** Conditions and notifications of the enabled triggers. */
  readonly alerts: AlertEngine;
  private ticker: NodeJS.Timeout | undefined;

  constructor(
    private readonly repo: TriggersRepository,
    private readonly users: UsersRepository,
    private readonly tasks: TasksService,
    private readonly opts: TriggersServiceOptions,
    private readonly alerting: Alerting,
    private readonly now: () => Date = () => new Date(),
  ) {
    const cluster = opts.cluster;
    this.alerts = new AlertEngine({
      now: () => this.now().getTime(),
      linkBase: () => alerting.linkBase(),
      // A second is judged once every node's counts of it are in: they are published within
      // SHARE_EVERY_MS of its end and cross the bus well within another SHARE_EVERY_MS.
      ...(cluster
        ? {
            share: { publish: cluster.publish, lagMs: 1000 + 2 * SHARE_EVERY_MS },
            sends: () => this.notifier,
          }
        : {}),
      onFiring: (f) => {
        this.onFiring(f).catch((err: unknown) =>
          this.opts.log.warn({ err: String(err) }, 'notification not queued'),
        );
      },
    });
  }

  /**
   * Starts the clock that slides threshold windows (silence, recoveries) once a second. In a
   * cluster it also publishes this node's matches and keeps trying for (or renewing) the
   * notifier's lease, first before it returns, so a lone node sends from its start.
   */
  async startAlerts(): Promise<void> {
    const cluster = this.opts.cluster;
    if (this.ticker) return;
    if (!cluster) {
      this.ticker = setInterval(() => this.alerts.tick(), 1000).unref();
      return;
    }
    await this.holdNotifierLease();
    let sinceLease = 0;
    this.ticker = setInterval(() => {
      this.alerts.flush();
      this.alerts.tick();
      sinceLease += SHARE_EVERY_MS;
      if (sinceLease >= cluster.leaseMs / 3 && !this.renewing) {
        sinceLease = 0;
        this.renewing = this.holdNotifierLease().finally(() => {
          this.renewing = null;
        });
      }
    }, SHARE_EVERY_MS).unref();
  }

  /**
   * Cluster mode: until when (this node's clock, ms) it holds the notifier's lease, a
   * second short of the lease itself, so a renewal that hangs never lets two nodes send.
   */
  private notifierUntil = 0;
  private renewing: Promise<void> | null = null;

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

  async stopAlerts(): Promise<void> {
    clearInterval(this.ticker);
    this.ticker = undefined;
    const c = this.opts.cluster;
    if (!c) return;
    this.alerts.flush();
    await this.renewing;
    if (this.notifierUntil > 0) {
      this.notifierUntil = 0;
      // Another node takes over at once instead of after the lease runs out.
      await c.leases.release(NOTIFIER_LEASE, c.node).catch(() => undefined);
    }
  }

  /** A firing: a delivery per channel (durable), and with create_task a task of its samples. */
  private async onFiring(f: Firing): Promise<void> {
    const t = f.trigger;
    await this.alerting.queue.enqueue(f.notification, t.id, t.notify);
    if (t.create_task && t.condition.type === 'threshold' && f.notification.kind === 'fire') {
      const row = this.rows.get(t.id);
      if (row) await this.taskFor(row, f.evIds, this.now().getTime());
    }
  }

  /**
   * Reads the enabled triggers into the matching index (at start and after each change).
   * Loads run one after another, so a slow read can never replace a newer index.
   */
  load(): Promise<void> {
    this.loading = this.loading.then(
      () => this.readIndex(),
      () => this.readIndex(),
    );
    return this.loading;
  }

  private async reloadAfterChange(): Promise<void> {
    await this.load();
    this.opts.onChanged?.();
  }

  private async readIndex(): Promise<void> {
    const rows = await this.repo.enabled();
    const compiled = rows.flatMap((r) => {
      try {
        return [{ id: r.id, filter: compileTrigger(r.query, JSON.parse(r.filter) as unknown[]) }];
      } catch (err) {
        // Stored triggers were valid when written; a later, stricter parser must not stop ingest.
        this.opts.log.warn({ trigger_id: r.id, err: String(err) }, 'trigger no longer valid; skipped');
        return [];
      }
    });
    this.rows = new Map(rows.map((r) => [r.id, r]));
    this.index = new TriggerIndex(compiled);
    this.alerts.setTriggers(rows.map(alertTrigger));
  }

  async list(
    who: Identity,
    opts: { showAll: boolean; owners?: number[] | undefined; enabled?: boolean | undefined },
    page: PageRequest,
  ): Promise<Page<Trigger>> {
    const all = opts.showAll && can(who, 'manage_triggers');
    const res = await this.repo.list(
      {
        ...(all ? {} : { visibleTo: who.userId }),
        ...(opts.owners ? { owners: opts.owners } : {}),
        ...(opts.enabled !== undefined ? { enabled: opts.enabled } : {}),
      },
      page,
    );
    return { count: res.count, rows: res.rows.map(present) };
  }

  async get(who: Identity, id: number): Promise<Trigger> {
    return present(await this.visible(who, id));
  }

  async create(who: Identity, input: FullTriggerInput): Promise<Trigger> {
    const values = await this.validate(who, withDefaults(input));
    // Each trigger holds windows, samples and a place in every event's match: bounded per user.
    const owned = await this.repo.countOwnedBy(who.userId);
    if (owned >= this.opts.maxPerUser)
      throw new AppError(
        409,
        'limit_reached',
        `You own ${owned} triggers, the most one user may (setting triggersPerUser); delete one first.`,
      );
    const now = this.now().toISOString();
    const row = await this.repo.insert({
      name: input.name,
      description: values.description ?? '',
      severity: values.severity ?? 'medium',
      query: values.query ?? '',
      filter: values.filter ?? '[]',
      enabled: values.enabled ?? 1,
      create_task: values.create_task ?? 0,
      assign_to: values.assign_to ?? null,
      ...(values.condition !== undefined ? { condition: values.condition } : {}),
      ...(values.notify !== undefined ? { notify: values.notify } : {}),
      ...(values.cooldown_seconds !== undefined ? { cooldown_seconds: values.cooldown_seconds } : {}),
      owner_id: who.userId,
      created_at: now,
      updated_at: now,
    });
    await this.reloadAfterChange();
    return present(row);
  }

  /** PUT: every writable field; omitted ones go back to their defaults. */
  replace(who: Identity, id: number, input: FullTriggerInput): Promise<Trigger> {
    return this.change(who, id, withDefaults(input));
  }

  /** PATCH: only the given fields. */
  update(who: Identity, id: number, input: TriggerInput): Promise<Trigger> {
    return this.change(who, id, input);
  }

  async delete(who: Identity, id: number): Promise<void> {
    await this.visible(who, id);
    if (!(await this.repo.delete(id))) throw notFound('No such trigger.');
    await this.reloadAfterChange();
  }

  /**
   * The matches of these events that `who` may see, grouped by event id: trigger data is
   * private like triggers: the caller's own triggers, every trigger for
   * `manage_triggers` holders and admins.
   */
  async matchesOf(evIds: readonly string[], who: Identity): Promise<Map<string, TriggerMatch[]>> {
    const out = new Map<string, TriggerMatch[]>();
    if (!evIds.length) return out;
    const scope = can(who, 'manage_triggers') ? {} : { ownerId: who.userId };
    for (const m of await this.repo.matchesOf(evIds, scope)) {
      const list = out.get(m.ev_id) ?? [];
      list.push({
        trigger_id: m.trigger_id,
        name: m.name,
        severity: m.severity,
        description: m.description,
        matched_at: Date.parse(m.matched_at) / 1000,
        task_id: m.task_id,
      });
      out.set(m.ev_id, list);
    }
    return out;
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
      ...this.alerts.metrics(),
    ];
  }

  /** Resolves once every queued match is recorded (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
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
    const task = await this.tasks.create(
      trigger.owner_id,
      {
        title: `Trigger "${trigger.name}" matched`.slice(0, 200),
        description: [trigger.description, `Matched by: ${query}`].filter(Boolean).join('\n\n'),
        assigned_to: trigger.assign_to,
        priority: trigger.severity,
        ev_ids: evIds.slice(0, TASK_EV_IDS_MAX),
      },
      { triggerId: trigger.id },
    );
    return task.id;
  }

  private async change(who: Identity, id: number, input: TriggerInput): Promise<Trigger> {
    const current = await this.visible(who, id);
    const values = await this.validate(who, input, current);
    const row = await this.repo.update(id, { ...values, updated_at: this.now().toISOString() });
    if (!row) throw notFound('No such trigger.');
    await this.reloadAfterChange();
    return present(row);
  }

  /** Owners see their triggers; `manage_triggers` holders and admins see (and change) all. */
  private async visible(who: Identity, id: number): Promise<TriggerRow> {
    const row = await this.repo.byId(id);
    if (!row || (row.owner_id !== who.userId && !can(who, 'manage_triggers'))) {
      throw notFound('No such trigger.');
    }
    return row;
  }

  /**
   * Checks what the body schema cannot: the query and filter parse (with the query
   * engine's own parsers, errors keyed `query` and `filter[...]`), together they select
   * something narrower than every event, and `assign_to` is a user.
   */
  private async validate(who: Identity, input: TriggerInput, current?: TriggerRow): Promise<TriggerUpdate> {
    const out: TriggerUpdate = {};
    const errors: FieldErrors = {};
    if (input.name !== undefined) {
      if (!input.name.trim()) errors.name = ['May not be blank.'];
      out.name = input.name;
    }
    if (input.description !== undefined) out.description = input.description;
    if (input.severity !== undefined) out.severity = input.severity;
    if (input.enabled !== undefined) out.enabled = input.enabled ? 1 : 0;
    if (input.create_task !== undefined) out.create_task = input.create_task ? 1 : 0;
    if (input.assign_to !== undefined) {
      if (input.assign_to !== null && !(await this.users.byId(input.assign_to))) {
        errors.assign_to = [`User ${input.assign_to} does not exist.`];
      }
      out.assign_to = input.assign_to;
    }
    if (input.query !== undefined || input.filter !== undefined) {
      const query = input.query ?? current?.query ?? '';
      const filter = input.filter ?? (current ? (JSON.parse(current.filter) as unknown[]) : []);
      try {
        if (compileTrigger(query, filter).kind === 'true') {
          errors.query = ['A trigger needs a query or a filter that selects something.'];
        }
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        Object.assign(errors, err.errors ?? { query: [err.message] });
      }
      if (input.query !== undefined) out.query = input.query;
      if (input.filter !== undefined) out.filter = JSON.stringify(input.filter);
    }
    if (input.condition !== undefined) {
      // No grouping is one count: stored as `group_by: []`.
      const given = input.condition;
      const condition: Condition =
        given.type === 'threshold' ? { ...given, group_by: given.group_by ?? [] } : { type: 'match' };
      Object.assign(errors, this.checkCondition(condition));
      out.condition = JSON.stringify(condition);
    }
    if (input.notify !== undefined) {
      const ids = [...new Set(input.notify)];
      const unusable = await this.alerting.channels.unusable(who, ids);
      if (unusable.length)
        errors.notify = [`Unknown channel${unusable.length > 1 ? 's' : ''}: ${unusable.join(', ')}.`];
      out.notify = JSON.stringify(ids);
    }
    if (input.cooldown_seconds !== undefined) out.cooldown_seconds = input.cooldown_seconds;
    if (Object.keys(errors).length) {
      throw validationError(errors, `Invalid input: ${Object.keys(errors).join(', ')}`);
    }
    return out;
  }

  private checkCondition(c: Condition): FieldErrors {
    if (c.type === 'match') return {};
    const errors: FieldErrors = {};
    if (c.op === 'lt' && c.value <= 0)
      errors['condition.value'] = ['"lt" needs a value above 0 (no count is below 0).'];
    c.group_by.forEach((f, i) => {
      const problem = checkFieldName(f);
      if (problem) errors[`condition.group_by[${i}]`] = [`Field name ${problem}.`];
    });
    if (new Set(c.group_by).size !== c.group_by.length) errors['condition.group_by'] = ['Each field once.'];
    return errors;
  }
}

const alertTrigger = (row: TriggerRow): AlertTrigger => ({
  id: row.id,
  name: row.name,
  severity: row.severity,
  description: row.description,
  query: row.query,
  condition: JSON.parse(row.condition) as Condition,
  notify: JSON.parse(row.notify) as number[],
  cooldown_seconds: row.cooldown_seconds,
  create_task: row.create_task === 1,
  version: row.updated_at,
});
