import type { Identity } from '../../core/identity.js';
import { newUlid } from '../../core/ids.js';
import { AppError, conflict, fieldError, isNoSpaceError, notFound } from '../../errors/errors.js';
import type { ColdReach, EventStore } from '../../event-store/event-store.js';
import type { ReadScope } from '../../event-store/read-scope.js';
import { EXPORT_FORMATS, parseExportFormat } from '../../export/export-format.js';
import type { ExportDocument, Renderer } from '../../export/renderer.js';
import { RENDERERS } from '../../export/renderers.js';
import { isValidTimeZone } from '../../export/time-format.js';
import type { FilterNode } from '../../filter/ast.js';
import { exportTable } from '../../query/export-tables.js';
import type { JobDefinition, QueryJob } from '../../query/job.js';
import { type ReadAudit, type ReadOrigin, type ReadRecord, recorded } from '../../query/read-audit.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import type { QueryRunner } from '../../query/runner.js';
import { resolveTimeRange } from '../../query/time-range.js';
import { QUERY_TYPE_DEFS } from '../../query/types/index.js';
import type { MetricAnswers, MetricParams } from '../../query/types/metric.js';
import {
  type AnsweredFrom,
  type CommonParamValues,
  type PresentOptions,
  QUERY_TYPES,
} from '../../query/types/query-type.js';
import { type ValidQuery, validateQuery } from '../../query/validate.js';
import type { ResultEnricher } from '../events/index.js';
import type { QueriesRepository } from './queries-repository.js';
import type { QueryRow } from './queries-table.js';

/** GenericQuery (the seed's representation plus error, progress and timestamps). */
export interface GenericQuery {
  query_id: string;
  status: string;
  type: string;
  base_time: number;
  results: unknown;
  params: unknown;
  owner_id: number;
  error: string | null;
  progress: number;
  created_at: string;
  updated_at: string;
  /** The cold files its range meets (docs/operations/cold-tier.md); null when none. */
  cold: ColdReach | null;
  /** What answered (docs/api/queries.md "answered_from"): the events, a log metric's buckets (`rollups`), or both. */
  answered_from: AnsweredFrom;
}

export interface QueryExport {
  renderer: Renderer;
  filename: string;
  doc: ExportDocument;
}

export interface QueriesServiceOptions {
  /** Most rows an export holds. */
  exportMaxRows: number;
  /** How long POST waits for a result before answering 202 (ms). */
  syncWindowMs: number;
  /** Queries unread this long are deleted (ms). */
  ttlMs: number;
}

// Reads move last_used_at at most this often: the TTL is in hours, not seconds.
const TOUCH_EVERY_MS = 60_000;

export class QueriesService {
  private readonly touchedAt = new Map<string, number>();

  constructor(
    private readonly repo: QueriesRepository,
    private readonly runner: QueryRunner,
    private readonly store: EventStore,
    private readonly opts: QueriesServiceOptions,
    /** The read-time step after `runner.present` (actions, GeoIP, trigger data). */
    private readonly enricher: ResultEnricher,
    /** What each query's owner may read (ADR 0013). */
    private readonly scopes: ReadScopes,
    /** Every query begun is recorded here (`query.create`), whatever its door (docs/api/audit.md). */
    private readonly audit: ReadAudit,
    /** What checks and answers Metric queries (the log-metrics feature). */
    private readonly metrics?: MetricAnswers,
  ) {}

  validate(body: { type: unknown; params: unknown }): ValidQuery {
    return validateQuery(body);
  }

  /**
   * Stores and starts a query without waiting (widget queries behind live subscriptions),
   * recorded as a `query.create` read from `origin` (with `detail`: the widget's id).
   * `scopeFixed`: the query is its read scope's (shared by the viewers with that scope),
   * not its owner's; it keeps that scope when its owner's rights change.
   */
  start(
    who: Identity,
    valid: ValidQuery,
    opts: { scopeFixed?: boolean; origin: ReadOrigin; detail?: Record<string, unknown> },
  ): Promise<QueryJob> {
    return recorded(
      this.audit,
      this.readOf(who, valid, opts.origin, opts.detail),
      () => this.begin(who, valid, opts),
      (job) => ({ target: { kind: 'query', id: job.id } }),
    );
  }

  /** A query begun, as its audit record describes it (docs/api/audit.md). */
  private readOf(
    who: Identity,
    valid: ValidQuery,
    origin: ReadOrigin,
    detail: Record<string, unknown> = {},
  ): Omit<ReadRecord, 'outcome'> {
    return {
      who,
      origin,
      action: 'query.create',
      target: { kind: 'query', id: null },
      detail: {
        ...detail,
        type: valid.type,
        query: valid.params.query ?? '',
        filter: valid.params.filter ?? [],
        time_range: valid.params.time_range ?? null,
        streams: valid.params.streams ?? null,
        result_count: null,
      },
    };
  }

  /**
   * A Metric query's metric must be one `who` may see, its params fit for it (a 400 on
   * `params.<name>`); other types pass. Widget queries (`widget`) are checked for each
   * viewer, also those who share a query another began; on a deleted metric they begin
   * and end ERROR naming it.
   */
  async checkMetric(who: Identity, valid: ValidQuery, widget: boolean): Promise<void> {
    if (valid.type !== 'Metric' || !this.metrics) return;
    await this.metrics.check(
      who,
      valid.params as MetricParams,
      resolveTimeRange(valid.params.time_range, Date.now()),
      widget,
    );
  }

  /** Where every query begins; only `start` and `create` call it, and both record it. */
  private async begin(who: Identity, valid: ValidQuery, opts: { scopeFixed?: boolean }): Promise<QueryJob> {
    // Refused before anything is stored (429 past `queryLivePerUser`, 503 when results
    // fill memory); `runner.start` admits again, in the step that makes the query live.
    this.runner.admit(who.userId);
    const now = new Date().toISOString();
    const row = {
      query_id: newUlid(),
      owner_id: who.userId,
      type: valid.type,
      params: JSON.stringify(valid.params),
      created_at: now,
      last_used_at: now,
    };
    // Narrowed to `streams` before anything is stored: an unreadable stream is a 400.
    const def = await this.definition(row, valid.filter);
    await this.checkMetric(who, valid, opts.scopeFixed ?? false);
    await this.repo.insert(row);
    try {
      return this.runner.start(def.row, def.filter, def.scope, opts);
    } catch (err) {
      // Another start took the last place while the row was written.
      await this.repo.delete(row.query_id);
      throw err;
    }
  }

  /**
   * Stores and starts a query; answers within the sync window or with its state so far.
   * Recorded as `query.create` from `origin`, with its result count when it answered one.
   */
  create(
    who: Identity,
    valid: ValidQuery,
    present: PresentOptions,
    origin: ReadOrigin,
  ): Promise<{ finished: boolean; query: GenericQuery }> {
    return recorded(
      this.audit,
      this.readOf(who, valid, origin),
      async () => {
        const job = await this.begin(who, valid, {});
        await this.runner.settle(job, this.opts.syncWindowMs);
        const finished = job.status === 'SUCCESS' || job.status === 'ERROR';
        return { finished, query: await this.represent(job, present, who) };
      },
      ({ query }) => {
        const total = (query.results as { total?: unknown } | null)?.total;
        return {
          target: { kind: 'query', id: query.query_id },
          detail: { result_count: typeof total === 'number' ? total : null },
        };
      },
    );
  }

  /**
   * Runs a query for one answer and forgets it (an MCP tool call): admitted, scoped and
   * recorded as `create` (429/503 past the same limits), waited for until it settles, `ms`
   * pass or `signal` aborts (then stopped: `settled` false), presented, then removed, so
   * it holds nothing once answered.
   */
  async answer(
    who: Identity,
    valid: ValidQuery,
    present: PresentOptions,
    origin: ReadOrigin,
    opts: { ms: number; signal: AbortSignal },
  ): Promise<{ settled: boolean; query: GenericQuery }> {
    return recorded(this.audit, this.readOf(who, valid, origin), async () => {
      const job = await this.begin(who, valid, {});
      try {
        const aborted = new Promise<void>((resolve) => {
          if (opts.signal.aborted) resolve();
          opts.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        await Promise.race([this.runner.settle(job, opts.ms), aborted]);
        const settled = job.status === 'SUCCESS' || job.status === 'ERROR';
        if (!settled) return { settled, query: await this.represent(job, {}) };
        return { settled, query: await this.represent(job, present, who) };
      } finally {
        await this.repo.delete(job.id);
        await this.runner.remove(job);
      }
    });
  }

  /**
   * The caller's query, computed again from its definition if the server restarted or
   * its results were dropped: admitted as a live query then (429, 503), unless `live` is
   * false (a stop or removal, which ends that computation at once).
   */
  async job(who: Identity, id: string, live = true): Promise<QueryJob> {
    let job = this.runner.peek(id);
    if (!job) {
      const row = await this.repo.byId(id);
      if (!row || !Object.hasOwn(QUERY_TYPE_DEFS, row.type)) throw notFound('No such query.');
      if (row.owner_id !== who.userId) throw notFound('No such query.');
      const def = await this.definition(row, this.filterOf(row));
      job = await this.runner.open(def.row, def.filter, def.scope, live);
    } else if (job.ownerId === who.userId) {
      // Cluster: the copy follows what the node computing it wrote (no-op in one process),
      // and is gone when another node removed the query.
      await this.runner.refresh(job);
      if (this.runner.peek(id) !== job) throw notFound('No such query.');
    }
    if (job.ownerId !== who.userId) throw notFound('No such query.');
    const rescoped = await this.readNow(who, job);
    // Dropped meanwhile (not admitted again): read from its definition, like after a restart.
    if (this.runner.peek(id) !== job) return this.job(who, id, live);
    await this.markUsed(id);
    // Results dropped to keep within the memory budget (or computed under rights since
    // changed): computed again, like after a restart.
    if (this.runner.revive(job, live) || rescoped) await this.runner.settle(job, this.opts.syncWindowMs);
    return job;
  }

  /**
   * Whether `who` may read the query now (`job`'s check): false when it is not theirs, is
   * gone, or is a shared widget query of a read scope that is no longer theirs. Cheap when
   * nothing changed (the query held here, the reader's cached scope). For the re-check of
   * live subscriptions by `query_id`.
   */
  async readable(who: Identity, id: string): Promise<boolean> {
    const held = this.runner.peek(id);
    if (held?.ownerId === who.userId && (await this.scopes.of(who)).key === held.scope.key) return true;
    try {
      await this.job(who, id, false);
      return true;
    } catch (err) {
      if (err instanceof AppError && err.status === 404) return false;
      throw err;
    }
  }

  /**
   * The one check every read of a held query passes (docs/access.md: what its reader may read at
   * the moment of the read, whoever started it, as for a new query): the reader's scope
   * now (the cached one's key) against the job's. A shared widget query (`scopeFixed`)
   * answers only a reader of its scope, else 404 like a query that does not exist (the
   * widget's subscription gives the viewer one of their own). A query of its owner's
   * whose rights changed is re-scoped first (the bus's `rescope` may not have reached it
   * yet); true when it is then computed again.
   */
  private async readNow(who: Identity, job: QueryJob): Promise<boolean> {
    const scope = await this.scopes.of(who);
    if (scope.key === job.scope.key) return false;
    if (job.scopeFixed) throw notFound('No such query.');
    return (await this.runner.rescope((j) => this.redefine(j), [job])) > 0;
  }

  async get(who: Identity, id: string, present: PresentOptions): Promise<GenericQuery> {
    const job = await this.job(who, id);
    this.runner.touch(job);
    return this.represent(job, present, who);
  }

  async recalculate(who: Identity, id: string): Promise<GenericQuery> {
    const job = await this.job(who, id);
    this.runner.recalculate(job);
    await this.runner.settle(job, this.opts.syncWindowMs);
    return this.represent(job, {});
  }

  async stop(who: Identity, id: string): Promise<GenericQuery> {
    const job = await this.job(who, id, false);
    await this.runner.stop(job);
    return this.represent(job, {});
  }

  async remove(who: Identity, id: string): Promise<GenericQuery> {
    const job = await this.job(who, id, false);
    const last = await this.represent(job, {});
    await this.repo.delete(id);
    await this.runner.remove(job);
    this.touchedAt.delete(id);
    return last;
  }

  /**
   * What `GET /api/query/{qid}/export` streams: the renderer, a safe file name and the
   * document (a Search streams every matching event, not one page). Waits for a running
   * query up to the sync window, then answers 409.
   */
  async export(
    who: Identity,
    id: string,
    q: { ftype?: string | undefined; timezone?: string | undefined; filename?: string | undefined },
  ): Promise<QueryExport> {
    const format = parseExportFormat(q.ftype ?? 'json');
    if (!format)
      throw fieldError(
        'ftype',
        `Unknown format "${q.ftype}"; use one of ${EXPORT_FORMATS.join(', ')} (or xslx).`,
      );
    const timezone = q.timezone ?? 'UTC';
    if (!isValidTimeZone(timezone))
      throw fieldError('timezone', `Unknown timezone "${timezone}"; use an IANA name such as Europe/Paris.`);
    const job = await this.job(who, id);
    await this.runner.settle(job, this.opts.syncWindowMs);
    if (job.status === 'PENDING' || job.status === 'IN_PROGRESS') {
      throw conflict('The query is still running; export it once its status is SUCCESS.');
    }
    if (job.status === 'ERROR') throw conflict(`The query failed: ${job.error ?? 'unknown error'}`);
    const renderer = RENDERERS[format];
    const base =
      (q.filename ?? `${job.type.toLowerCase()}-${job.id}`).replace(/[^\w.\- ]+/g, '_').slice(0, 200) ||
      'export';
    const filename = base.toLowerCase().endsWith(`.${renderer.ext}`) ? base : `${base}.${renderer.ext}`;
    const table = exportTable(
      job,
      await this.runner.present(job, { page: 1 }),
      this.store,
      this.opts.exportMaxRows,
    );
    return {
      renderer,
      filename,
      doc: { title: table.title, timezone, generatedAt: new Date(), sections: [{ kind: 'table', table }] },
    };
  }

  /**
   * What a query's job is made from: its filter narrowed to the streams it names, and its
   * owner's read scope, resolved now (rights may have changed since it was stored).
   */
  private async definition(row: QueryRow, filter: FilterNode): Promise<JobDefinition> {
    const params = JSON.parse(row.params) as CommonParamValues;
    const [scope, narrowed] = await Promise.all([
      this.scopes.ofUser(row.owner_id),
      this.scopes.narrow(row.owner_id, filter, params.streams),
    ]);
    return { row, filter: narrowed, scope };
  }

  private filterOf(row: QueryRow) {
    return validateQuery({ type: row.type, params: JSON.parse(row.params) }).filter;
  }

  /** Rights changed: the queries held here read as their owners may now (QueryRunner.rescope). */
  rescope(): Promise<number> {
    return this.runner.rescope((job) => this.redefine(job));
  }

  /**
   * A held job's read under its owner's rights now. A shared widget query keeps its scope
   * (its readers are checked at each read, `readNow`, and each live watch by the hub).
   */
  private async redefine(job: QueryJob): Promise<{ filter: FilterNode; scope: ReadScope }> {
    if (job.scopeFixed) return { filter: job.filter, scope: job.scope };
    // Most owners' rights did not change: their scope's key is the job's (the cached
    // scope, no query parsed again).
    const scope = await this.scopes.ofUser(job.ownerId);
    if (scope.key === job.scope.key) return { filter: job.filter, scope: job.scope };
    const row: QueryRow = {
      query_id: job.id,
      owner_id: job.ownerId,
      type: job.type,
      params: JSON.stringify(job.params),
      created_at: job.createdAt,
      last_used_at: job.createdAt,
    };
    return this.definition(row, this.filterOf(row));
  }

  /** Cluster: computes the queries whose node died mid-computation (see QueryRunner.adopt). */
  adopt(): Promise<number> {
    return this.runner.adopt(async (id) => {
      const row = await this.repo.byId(id);
      if (!row || !Object.hasOwn(QUERY_TYPE_DEFS, row.type)) return null;
      return this.definition(row, this.filterOf(row));
    });
  }

  /**
   * Queries a live subscription watches count as read (their `last_used_at` moves, at
   * most once a minute): the TTL sweep of any node, which cannot see another node's
   * subscriptions, leaves them alone.
   */
  async watched(ids: Iterable<string>): Promise<void> {
    for (const id of ids) await this.markUsed(id);
  }

  /** Deletes queries nobody read for the TTL. */
  async sweep(): Promise<number> {
    const ids = await this.repo.unusedSince(new Date(Date.now() - this.opts.ttlMs).toISOString());
    for (const id of ids) {
      if (this.runner.watched(id)) {
        await this.repo.touch(id, new Date().toISOString());
        continue;
      }
      this.runner.forget(id);
      this.touchedAt.delete(id);
      await this.repo.delete(id);
    }
    return ids.filter((id) => !this.runner.watched(id)).length;
  }

  types() {
    return QUERY_TYPES.map((t) => ({
      type: t,
      description: QUERY_TYPE_DEFS[t].description,
      params: QUERY_TYPE_DEFS[t].params,
      results: QUERY_TYPE_DEFS[t].results,
    }));
  }

  private async markUsed(id: string) {
    const now = Date.now();
    if (now - (this.touchedAt.get(id) ?? 0) < TOUCH_EVERY_MS) return;
    this.touchedAt.set(id, now);
    // A read must work on a full disk: the TTL hint is written again on a later read.
    await this.repo.touch(id, new Date(now).toISOString()).catch((err: unknown) => {
      if (!isNoSpaceError(err)) throw err;
      this.touchedAt.delete(id);
    });
  }

  /** The representation of a query for `who` (trigger data shows only what they may see). */
  async represent(job: QueryJob, present: PresentOptions, who?: Identity): Promise<GenericQuery> {
    // The cold files' reach is the store worker's to say: asked first, it is answered
    // while this thread presents the results (a round trip of ~0.6 ms otherwise added).
    // A Metric query reads its metric's buckets: no cold file, no word index.
    const reach =
      job.def.answeredFrom === 'rollups'
        ? Promise.resolve({ cold: null, index: null })
        : this.store.readReach(job.filter, job.scope, job.window);
    reach.catch(() => undefined); // not unhandled when presenting throws first
    const results = await this.enricher.enrich(
      job.type,
      await this.runner.present(job, present),
      who ? { ...present, who } : present,
      job.params,
    );
    return {
      query_id: job.id,
      status: job.status,
      type: job.type,
      base_time: Math.floor(job.baseMs / 1000),
      results,
      params: job.params,
      owner_id: job.ownerId,
      error: job.error,
      progress: job.progress,
      created_at: job.createdAt,
      updated_at: job.updatedAt,
      answered_from: job.def.answeredFrom ?? 'events',
      ...(await reach),
    };
  }
}
