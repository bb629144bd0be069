import { isDeepStrictEqual } from 'node:util';
import type { Static } from 'typebox';
import { can, type Identity } from '../../core/identity.js';
import { newUlid } from '../../core/ids.js';
import type { Page, PageRequest } from '../../core/list.js';
import type { Log } from '../../core/log.js';
import { counter, type MetricDecl } from '../../core/metrics.js';
import { presentEvent } from '../../core/present-event.js';
import { conflict, notFound, permissionDenied, validationError } from '../../errors/errors.js';
import { normaliseRecord } from '../../ingest/normalise.js';
import { BUILTIN_PIPELINES, type BuiltinPipeline } from '../../ingest/pipelines/builtin-pipelines.js';
import {
  type CompiledPipeline,
  compilePipeline,
  PipelineDefinitionError,
  PipelineSet,
  type PipelineTrace,
} from '../../ingest/pipelines/pipeline.js';
import type { PipelineSchema } from './pipeline-schema.js';
import type { PipelinesRepository } from './pipelines-repository.js';
import type { PipelineRow } from './pipelines-table.js';

/** At most this many events per simulate request. */
export const SIMULATE_MAX_EVENTS = 100;
/** Where a new pipeline runs unless told: after every built-in (theirs are 10 to 160). */
export const DEFAULT_ORDER = 200;

/** A pipeline as the API shows it. */
export type Pipeline = Static<typeof PipelineSchema>;

export interface PipelineInput {
  name?: string | undefined;
  description?: string | undefined;
  enabled?: boolean | undefined;
  order?: number | undefined;
  when?: string | undefined;
  steps?: unknown[] | undefined;
}
export type FullPipelineInput = PipelineInput & { name: string; steps: unknown[] };

export interface SimulateInput {
  /** A pipeline definition to try. */
  pipeline?: { name?: string; when?: string; steps: unknown[] } | undefined;
  /** A stored pipeline to try (enabled or not). Without either, the pipelines intake runs. */
  pipeline_id?: number | undefined;
  events: unknown[];
}

export interface SimulatedEvent {
  /** The event as it would be stored; null when it was rejected or dropped. */
  event: Record<string, unknown> | null;
  dropped: boolean;
  /** Why intake would reject the record (not an object, too many fields). */
  error?: string;
  /** Pipelines that applied, in order. */
  applied: string[];
  /** Pipelines undone by a failing step, with the step's error. */
  failures: Array<{ pipeline: string; error: string }>;
}

const BUILTINS = new Map(BUILTIN_PIPELINES.map((b) => [b.key, b]));
/** What a built-in row may change; the rest of a built-in is its code. */
const BUILTIN_WRITABLE = new Set(['enabled', 'order']);

/**
 * Pipelines: CRUD for admins and `manage_pipelines` holders (pipelines are shared, as
 * they change what everyone's events hold), `simulate`, and the set intake runs.
 * `manage_pipelines` is admin-level (ADR 0020): a step writes the fields stream rules
 * read, so it decides who reads the events it touches; no change is refused for that.
 *
 * `current` is what ingest runs, replaced whole after each change so that a piece of
 * events always runs through one consistent set. Compiled pipelines are kept by id and
 * `updated_at`: an unchanged pipeline keeps its compiled form across reloads, and a
 * pipeline keeps its counters across its own changes (its metrics never go back).
 */
export class PipelinesService {
  current = new PipelineSet([]);
  private compiled = new Map<number, { version: string; pipeline: CompiledPipeline }>();
  private loading: Promise<void> = Promise.resolve();

  constructor(
    private readonly repo: PipelinesRepository,
    private readonly opts: {
      /** Where a stored pipeline that no longer compiles is told. */
      log: Log;
      /** Told after this process changed pipelines (cluster: the other nodes reload theirs). */
      onChanged?: () => void;
    },
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** At start: writes the rows of new built-ins, then reads every pipeline. */
  async start(): Promise<void> {
    const at = this.now().toISOString();
    await this.repo.ensureBuiltins(
      BUILTIN_PIPELINES.map((b) => ({
        builtin_key: b.key,
        name: b.name,
        description: b.description,
        enabled: 1,
        run_order: b.order,
        // The definition is the code's; the row keeps what an admin may change.
        when_query: '',
        steps: '[]',
        owner_id: null,
        created_at: at,
        updated_at: at,
      })),
    );
    await this.load();
  }

  /** Reads the enabled pipelines into `current`; loads run one after another. */
  load(): Promise<void> {
    this.loading = this.loading.then(
      () => this.readSet(),
      () => this.readSet(),
    );
    return this.loading;
  }

  private async readSet(): Promise<void> {
    const rows = await this.repo.all();
    const kept = new Map<number, { version: string; pipeline: CompiledPipeline }>();
    const running: CompiledPipeline[] = [];
    for (const row of rows) {
      if (row.enabled !== 1) continue;
      const pipeline = this.compiledOf(row, kept);
      if (pipeline) running.push(pipeline);
    }
    this.compiled = kept;
    this.current = new PipelineSet(running);
  }

  /** The compiled form of a row, reused while the row is unchanged; null if it does not compile. */
  private compiledOf(
    row: PipelineRow,
    into: Map<number, { version: string; pipeline: CompiledPipeline }>,
  ): CompiledPipeline | null {
    const version = `${row.updated_at}|${row.builtin_key ?? ''}`;
    const known = this.compiled.get(row.id);
    if (known?.version === version) {
      into.set(row.id, known);
      return known.pipeline;
    }
    try {
      const builtin = row.builtin_key === null ? undefined : BUILTINS.get(row.builtin_key);
      // A built-in this version does not know (written by another version) runs nothing.
      if (row.builtin_key !== null && !builtin) return null;
      const fresh = builtin
        ? compilePipeline(row.id, builtin, true)
        : compilePipeline(row.id, { name: row.name, when: row.when_query, steps: parseSteps(row.steps) });
      // A changed pipeline goes on counting where it was.
      const pipeline = known ? { ...fresh, stats: known.pipeline.stats } : fresh;
      into.set(row.id, { version, pipeline });
      return pipeline;
    } catch (err) {
      // Stored pipelines were valid when written; a later, stricter compiler must not stop ingest.
      this.opts.log.warn({ pipeline_id: row.id, err: String(err) }, 'pipeline no longer valid; skipped');
      return null;
    }
  }

  async list(
    who: Identity,
    filter: { enabled?: boolean | undefined; builtin?: boolean | undefined },
    page: PageRequest,
  ): Promise<Page<Pipeline>> {
    this.allowed(who);
    const res = await this.repo.list(
      {
        ...(filter.enabled !== undefined ? { enabled: filter.enabled } : {}),
        ...(filter.builtin !== undefined ? { builtin: filter.builtin } : {}),
      },
      page,
    );
    return { count: res.count, rows: res.rows.map(present) };
  }

  async get(who: Identity, id: number): Promise<Pipeline> {
    this.allowed(who);
    return present(await this.row(id));
  }

  async create(who: Identity, input: FullPipelineInput): Promise<Pipeline> {
    this.allowed(who);
    const values = { ...userDefaults(input), ...input };
    checkDefinition(values);
    const now = this.now().toISOString();
    const row = await this.repo.insert({
      builtin_key: null,
      name: values.name,
      description: values.description,
      enabled: values.enabled ? 1 : 0,
      run_order: values.order,
      when_query: values.when,
      steps: JSON.stringify(values.steps),
      owner_id: who.userId,
      created_at: now,
      updated_at: now,
    });
    await this.reloadAfterChange();
    return present(row);
  }

  /** PUT: every writable field; omitted ones go back to their defaults (a built-in's: its code). */
  async replace(who: Identity, id: number, input: FullPipelineInput): Promise<Pipeline> {
    this.allowed(who);
    const row = await this.row(id);
    const defaults = row.builtin_key === null ? userDefaults(input) : builtinDefaults(row);
    return this.change(row, { ...defaults, ...input });
  }

  /** PATCH: only the given fields. */
  async update(who: Identity, id: number, input: PipelineInput): Promise<Pipeline> {
    this.allowed(who);
    return this.change(await this.row(id), input);
  }

  async delete(who: Identity, id: number): Promise<void> {
    this.allowed(who);
    const row = await this.row(id);
    if (row.builtin_key !== null)
      throw conflict('A built-in pipeline cannot be deleted; disable it instead (enabled: false).');
    if (!(await this.repo.delete(id))) throw notFound('No such pipeline.');
    await this.reloadAfterChange();
  }

  /**
   * Runs records through a pipeline definition, a stored pipeline (enabled or not), or
   * the pipelines intake runs, as intake would, storing nothing. A definition that does
   * not compile is refused with every problem keyed by where it is
   * (`pipeline.steps[0].grok.patterns[1]`).
   */
  async simulate(who: Identity, input: SimulateInput): Promise<{ events: SimulatedEvent[] }> {
    this.allowed(who);
    let set = this.current;
    if (input.pipeline && input.pipeline_id !== undefined)
      throw validationError(
        { pipeline_id: ['Give either pipeline or pipeline_id.'] },
        'Give either pipeline or pipeline_id.',
      );
    if (input.pipeline) {
      try {
        set = new PipelineSet([
          compilePipeline(0, {
            name: input.pipeline.name ?? 'simulated',
            when: input.pipeline.when ?? '',
            steps: input.pipeline.steps,
          }),
        ]);
      } catch (err) {
        if (!(err instanceof PipelineDefinitionError)) throw err;
        const errors = Object.fromEntries(Object.entries(err.errors).map(([k, v]) => [`pipeline.${k}`, v]));
        throw validationError(errors, `Invalid pipeline: ${Object.keys(errors).join(', ')}`);
      }
    } else if (input.pipeline_id !== undefined) {
      const row = await this.row(input.pipeline_id);
      const compiled = this.compiledOf(row, new Map());
      if (!compiled) throw conflict('This pipeline no longer compiles; change its steps first.');
      // A fresh copy: simulating never counts in the running pipeline's metrics.
      set = new PipelineSet([{ ...compiled, stats: { matched: 0, failed: 0, dropped: 0 } }]);
    }
    const receivedAt = Date.now();
    const ctx = { receivedAt, intake: `simulate:${who.username}`, newId: () => newUlid(receivedAt) };
    return {
      events: input.events.map((record) => {
        const normalised = normaliseRecord(record, ctx);
        if (!normalised.ok)
          return { event: null, dropped: false, error: normalised.detail, applied: [], failures: [] };
        const trace: PipelineTrace = { applied: [], failures: [] };
        const out = set.run(normalised.event, trace);
        return {
          event: out === null ? null : presentEvent({ ...out, stored_at: receivedAt }),
          dropped: out === null,
          ...trace,
        };
      }),
    };
  }

  /** Counts per running pipeline. */
  stats() {
    return {
      seconds: this.current.seconds,
      pipelines: this.current.pipelines.map((p) => ({ name: p.name, ...p.stats })),
    };
  }

  /**
   * Per pipeline name, counters that only grow: a pipeline's counts go on across its
   * changes, and start at zero for a new pipeline of a name seen before.
   */
  metrics(): MetricDecl[] {
    const perPipeline = (kind: 'matched' | 'failed' | 'dropped') => () =>
      Object.fromEntries(this.stats().pipelines.map((p) => [p.name, p[kind]]));
    return [
      counter(
        'logscope_pipeline_matched_events_total',
        'Events a pipeline applied to (its `when` selected them).',
        perPipeline('matched'),
        'pipeline',
      ),
      counter(
        'logscope_pipeline_failed_events_total',
        'Events on which a pipeline step failed; the pipeline was undone for them and they were stored unchanged.',
        perPipeline('failed'),
        'pipeline',
      ),
      counter(
        'logscope_pipeline_dropped_events_total',
        'Events a pipeline dropped (not stored).',
        perPipeline('dropped'),
        'pipeline',
      ),
      counter(
        'logscope_pipeline_seconds_total',
        'Time spent running pipelines at intake.',
        () => this.current.seconds,
      ),
    ];
  }

  private allowed(who: Identity): void {
    if (!can(who, 'manage_pipelines')) throw permissionDenied();
  }

  private async row(id: number): Promise<PipelineRow> {
    const row = await this.repo.byId(id);
    if (!row) throw notFound('No such pipeline.');
    return row;
  }

  private async change(row: PipelineRow, input: PipelineInput): Promise<Pipeline> {
    if (row.builtin_key !== null) checkBuiltinChange(row, input);
    else if (input.steps !== undefined || input.when !== undefined)
      checkDefinition({
        name: input.name ?? row.name,
        when: input.when ?? row.when_query,
        steps: input.steps ?? parseSteps(row.steps),
      });
    const patch = {
      ...(row.builtin_key === null && input.name !== undefined ? { name: input.name } : {}),
      ...(row.builtin_key === null && input.description !== undefined
        ? { description: input.description }
        : {}),
      ...(row.builtin_key === null && input.when !== undefined ? { when_query: input.when } : {}),
      ...(row.builtin_key === null && input.steps !== undefined
        ? { steps: JSON.stringify(input.steps) }
        : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled ? 1 : 0 } : {}),
      ...(input.order !== undefined ? { run_order: input.order } : {}),
    };
    const updated = await this.repo.update(row.id, { ...patch, updated_at: this.newVersion(row.updated_at) });
    if (!updated) throw notFound('No such pipeline.');
    await this.reloadAfterChange();
    return present(updated);
  }

  /** A timestamp after `previous`, so that a change within its millisecond is still seen. */
  private newVersion(previous: string): string {
    const now = this.now();
    const prev = Date.parse(previous);
    return (now.getTime() > prev ? now : new Date(prev + 1)).toISOString();
  }

  private async reloadAfterChange(): Promise<void> {
    await this.load();
    this.opts.onChanged?.();
  }
}

function parseSteps(json: string): unknown[] {
  const steps = JSON.parse(json) as unknown;
  return Array.isArray(steps) ? steps : [];
}

const userDefaults = (input: FullPipelineInput) => ({
  name: input.name,
  description: '',
  enabled: true,
  order: DEFAULT_ORDER,
  when: '',
  steps: input.steps,
});

/** A built-in's fields as its code defines them, with its row's enabled (true) and order. */
function builtinDefaults(row: PipelineRow) {
  const def = BUILTINS.get(row.builtin_key ?? '');
  return {
    name: def?.name ?? row.name,
    description: def?.description ?? row.description,
    enabled: true,
    order: def?.order ?? row.run_order,
    when: def?.when ?? '',
    steps: def?.steps ?? [],
  };
}

/** Refuses a definition that does not compile, with every problem keyed by where it is. */
function checkDefinition(def: { name: string; when: string; steps: unknown[] }): void {
  try {
    compilePipeline(0, def);
  } catch (err) {
    if (!(err instanceof PipelineDefinitionError)) throw err;
    throw validationError(err.errors, err.message);
  }
}

/** A built-in may be enabled, disabled or reordered; sending its own definition back is fine. */
function checkBuiltinChange(row: PipelineRow, input: PipelineInput): void {
  const own = builtinDefaults(row);
  const errors: Record<string, string[]> = {};
  for (const [field, value] of Object.entries(input)) {
    if (value === undefined || BUILTIN_WRITABLE.has(field)) continue;
    if (isDeepStrictEqual(value, own[field as keyof typeof own])) continue;
    errors[field] = [
      'A built-in pipeline can only be enabled, disabled or reordered; create your own pipeline to change what it does.',
    ];
  }
  if (Object.keys(errors).length > 0)
    throw validationError(errors, `Built-in pipeline: ${Object.keys(errors).join(', ')} cannot change.`);
}

function present(row: PipelineRow): Pipeline {
  const builtin: BuiltinPipeline | undefined =
    row.builtin_key === null ? undefined : BUILTINS.get(row.builtin_key);
  return {
    id: row.id,
    name: builtin?.name ?? row.name,
    description: builtin?.description ?? row.description,
    enabled: row.enabled === 1,
    order: row.run_order,
    when: builtin ? builtin.when : row.when_query,
    steps: builtin ? [...builtin.steps] : parseSteps(row.steps),
    owner: row.owner_id,
    builtin: row.builtin_key !== null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
