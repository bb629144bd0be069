import type { Static } from 'typebox';
import type { NormalisedEvent } from '../../core/event.js';
import { can, type Identity } from '../../core/identity.js';
import type { Page, PageRequest } from '../../core/list.js';
import type { Log } from '../../core/log.js';
import type { MetricDecl } from '../../core/metrics.js';
import { AppError, type FieldErrors, notFound, validationError } from '../../errors/errors.js';
import { NO_EVENT, type ReadScope, scopedFilter } from '../../event-store/read-scope.js';
import type { FilterNode } from '../../filter/ast.js';
import { checkFieldName } from '../../filter/conditions.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import {
  type AlertEngine,
  type Condition,
  everyScope,
  type PatternRateInput,
  patternRateCondition,
  type ThresholdCondition,
} from '../alerting/index.js';
import type { UsersRepository } from '../identity/index.js';
import type { TaskPriority, TasksService } from '../tasks/tasks-service.js';
import {
  type AlertCluster,
  type Alerting,
  AlertNotifier,
  type AlertNotifierOptions,
  type TriggerReads,
} from './alert-notifier.js';
import { checkReadBudget } from './trigger-budget.js';
import { compileTrigger, TriggerMatcher } from './trigger-matcher.js';
import type { TriggerSchema } from './trigger-schema.js';
import type { TriggersRepository } from './triggers-repository.js';
import type { TriggerRow, TriggerUpdate } from './triggers-table.js';

export type { Alerting } from './alert-notifier.js';

/** Trigger representation. */
export type Trigger = Static<typeof TriggerSchema>;

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
  | (Omit<ThresholdCondition, 'group_by'> & { group_by?: string[] | undefined })
  | { type: 'new_pattern'; warmup_seconds?: number | undefined }
  | PatternRateInput;

export interface TriggersServiceOptions {
  /** Matches of a create_task trigger within this long of its open task join it (ms). */
  taskWindowMs: number;
  /** Most matches waiting to be recorded; beyond it new matches are dropped and counted. */
  maxPendingMatches: number;
  /** Triggers one user may own. */
  maxPerUser: number;
  /** `patternRateReadsPerHour`: one user's pattern_rate triggers' store reads (trigger-budget.ts). */
  patternRateReadsPerHour: number;
  /** Where recording failures, drops and skipped triggers are told. */
  log: Log;
  /** Told after this process changed triggers (cluster: the other nodes reload theirs). */
  onChanged?: () => void;
  /** What each trigger's `run_as` user may read: a trigger matches nothing else. */
  scopes: ReadScopes;
  /** Patterns, for new_pattern conditions. */
  patterns?: AlertNotifierOptions['patterns'];
  /** pattern_rate conditions: the event store their windows are counted in, and the settle time. */
  patternRate?: AlertNotifierOptions['patternRate'];
  /**
   * Cluster mode: every node counts every node's matches (shared on the bus), and the
   * holder of the `alert-notifier` lease sends the notifications.
   */
  cluster?: AlertCluster;
}

/** Seconds between two notifications of one trigger and group, unless told. */
export const DEFAULT_COOLDOWN_SECONDS = 300;

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

/**
 * Whether a change decides what the trigger matches or where it sends: its query, filter,
 * condition or channels. The trigger then runs with the rights of whoever made it.
 */
const decides = (input: TriggerInput): boolean =>
  input.query !== undefined ||
  input.filter !== undefined ||
  input.condition !== undefined ||
  input.notify !== undefined;

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
  run_as: row.run_as,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/**
 * Triggers: CRUD with the ownership rules of dashboards (owner; `manage_triggers` holders
 * and admins see and change all). It composes the matching of every committed event
 * against every enabled trigger, with the recording of matches and their tasks
 * (`trigger-matcher.ts`), and the notifier that turns the alert engine's firings into
 * deliveries (`alert-notifier.ts`).
 */
export class TriggersService {
  private readonly matcher: TriggerMatcher;
  private readonly notifier: AlertNotifier;
  private loading: Promise<void> = Promise.resolve();
  /** Conditions and notifications of the enabled triggers. */
  readonly alerts: AlertEngine;

  constructor(
    private readonly repo: TriggersRepository,
    private readonly users: UsersRepository,
    tasks: TasksService,
    private readonly opts: TriggersServiceOptions,
    private readonly alerting: Alerting,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.notifier = new AlertNotifier(alerting, opts, now, (id, evIds, at) =>
      this.matcher.taskOfFiring(id, evIds, at),
    );
    this.alerts = this.notifier.engine;
    this.matcher = new TriggerMatcher(repo, tasks, this.alerts, opts, now);
  }

  /** Matches dropped because too many waited to be recorded. */
  get dropped(): number {
    return this.matcher.dropped;
  }

  /**
   * Starts the clock that slides threshold windows (silence, recoveries) once a second. In a
   * cluster it also publishes this node's matches and keeps trying for (or renewing) the
   * notifier's lease, first before it returns, so a lone node sends from its start.
   */
  startAlerts(): Promise<void> {
    return this.notifier.start();
  }

  stopAlerts(): Promise<void> {
    return this.notifier.stop();
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
    // A trigger matches only what the users who decided it may read (ADR 0013,
    // docs/api/triggers.md): its filter, its `stream:` conditions resolved for its `run_as`,
    // within that user's scope and the scope of whoever set where each of its channels
    // sends. Read again when rights or channels change.
    const deciders = await this.alerting.channels.decidersOf([
      ...new Set(rows.flatMap((r) => JSON.parse(r.notify) as number[])),
    ]);
    const filters = new Map<number, FilterNode | Error>();
    // The scopes each trigger reads with, by key: samples gathered under others are dropped.
    const scopeKeys = new Map<number, string>();
    // pattern_rate triggers count in the event store: their filter, and the scopes as one.
    const reads = new Map<number, TriggerReads>();
    for (const r of rows) {
      try {
        const own = compileTrigger(r.query, JSON.parse(r.filter) as unknown[]);
        const runAs = r.run_as;
        if (runAs === null) {
          filters.set(r.id, scopedFilter(NO_EVENT, own));
          scopeKeys.set(r.id, NO_EVENT.key);
          reads.set(r.id, { filter: own, scope: NO_EVENT });
          continue;
        }
        const channelUsers = (JSON.parse(r.notify) as number[]).flatMap((id) =>
          deciders.has(id) ? [deciders.get(id) ?? null] : [],
        );
        const [narrowed, ...scopes] = await Promise.all([
          this.opts.scopes.narrow(runAs, own, undefined, { streams: 'streams', query: 'query' }),
          this.opts.scopes.ofUser(runAs),
          ...[...new Set(channelUsers)]
            .filter((u) => u !== runAs)
            .map((u) => (u === null ? Promise.resolve(NO_EVENT) : this.opts.scopes.ofUser(u))),
        ]);
        filters.set(
          r.id,
          (scopes as ReadScope[]).reduceRight((f, scope) => scopedFilter(scope, f), narrowed as FilterNode),
        );
        scopeKeys.set(r.id, (scopes as ReadScope[]).map((scope) => scope.key).join('&'));
        reads.set(r.id, { filter: narrowed as FilterNode, scope: everyScope(scopes as ReadScope[]) });
      } catch (err) {
        filters.set(r.id, err instanceof Error ? err : new Error(String(err)));
      }
    }
    // A pattern_rate trigger matches no event as it arrives: it counts windows in the store.
    const matched = rows.filter((r) => (JSON.parse(r.condition) as Condition).type !== 'pattern_rate');
    this.matcher.setTriggers(matched, (r) => {
      const f = filters.get(r.id);
      if (!f || f instanceof Error) throw f ?? new Error('no filter');
      return f;
    });
    this.notifier.setTriggers(
      rows,
      (id) => scopeKeys.get(id) ?? '',
      (id) => reads.get(id),
    );
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
    await checkReadBudget(this.repo, who.userId, values, this.opts.patternRateReadsPerHour);
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
      run_as: who.userId,
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
    this.matcher.matchCommitted(events);
  }

  /** Counts since start. */
  stats() {
    return this.matcher.stats();
  }

  metrics(): MetricDecl[] {
    return [...this.matcher.metrics(), ...this.alerts.metrics(), ...this.notifier.metrics()];
  }

  /** Resolves once every queued match is recorded (tests, shutdown). */
  idle(): Promise<void> {
    return this.matcher.idle();
  }

  private async change(who: Identity, id: number, input: TriggerInput): Promise<Trigger> {
    const current = await this.visible(who, id);
    const values = await this.validate(who, input, current);
    const budget = this.opts.patternRateReadsPerHour;
    await checkReadBudget(this.repo, current.owner_id, { ...current, ...values, id }, budget);
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
    // What it matches and where it sends are decisions: whoever makes one, the trigger runs
    // with their rights from then on (docs/api/triggers.md), so a `stream:` it names must be
    // one they may read, as in a search: else 400.
    if (decides(input)) {
      const given = input.query !== undefined || input.filter !== undefined;
      const query = input.query ?? current?.query ?? '';
      const filter = input.filter ?? (current ? (JSON.parse(current.filter) as unknown[]) : []);
      try {
        const compiled = compileTrigger(query, filter);
        // A pattern_rate trigger may watch every event its reader may read.
        const type = input.condition?.type ?? (current && (JSON.parse(current.condition) as Condition).type);
        if (compiled.kind === 'true' && type !== 'pattern_rate') {
          errors.query = ['A trigger needs a query or a filter that selects something.'];
        }
        await this.opts.scopes.narrow(who.userId, compiled, undefined, { streams: 'filter', query: 'query' });
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        const found = err.errors ?? { query: [err.message] };
        // Its query was not given: say why a stored one is refused now.
        if (!given)
          for (const key of Object.keys(found))
            found[key] = [
              `${found[key]?.join(' ')} This trigger would run with your rights: change its query and filter too, or leave its condition and channels to whom it runs as.`,
            ];
        Object.assign(errors, found);
      }
      out.run_as = who.userId;
      if (input.query !== undefined) out.query = input.query;
      if (input.filter !== undefined) out.filter = JSON.stringify(input.filter);
    }
    if (input.condition !== undefined) {
      // No grouping is one count: stored as `group_by: []`.
      const given = input.condition;
      const condition: Condition =
        given.type === 'threshold'
          ? { ...given, group_by: given.group_by ?? [] }
          : given.type === 'new_pattern'
            ? { type: 'new_pattern', warmup_seconds: given.warmup_seconds ?? 3600 }
            : given.type === 'pattern_rate'
              ? patternRateCondition(given)
              : { type: 'match' };
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
    if (c.type !== 'threshold') return {};
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
