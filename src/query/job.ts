import { AppError } from '../errors/errors.js';
import type { TimeWindow } from '../event-store/query-plan.js';
import type { ReadScope } from '../event-store/read-scope.js';
import type { FilterNode } from '../filter/ast.js';
import type { JobState, QueryStatus } from './job-store.js';
import { resolveTimeRange } from './time-range.js';
import { QUERY_TYPE_DEFS } from './types/index.js';
import type { CommonParamValues, QueryTypeDef, QueryTypeName } from './types/query-type.js';

export type { QueryStatus } from './job-store.js';

/** A query's live state: its definition plus the latest computation. */
export interface QueryJob {
  readonly id: string;
  readonly ownerId: number;
  readonly type: QueryTypeName;
  readonly def: QueryTypeDef;
  readonly params: CommonParamValues;
  /** Its filter, `stream:` and `params.streams` resolved (given again when rights change). */
  filter: FilterNode;
  /** The events its owner may read (ADR 0013): every plan of the job carries it. */
  scope: ReadScope;
  /**
   * Started for a read scope rather than for its owner (a widget query its viewers with
   * that scope share): its scope stays when its owner's rights change; viewers whose
   * scope changed subscribe again to a query of their new scope, and a read of it by id
   * answers only a reader of its scope (QueriesService.job).
   */
  readonly scopeFixed: boolean;
  readonly createdAt: string;
  status: QueryStatus;
  /** The type's raw results (presented on read), null before the first slice. */
  results: unknown;
  progress: number;
  error: string | null;
  /** The evaluation time (ms) the window was resolved at. */
  baseMs: number;
  window: TimeWindow;
  updatedAt: string;
  /** Set while a computation runs. */
  controller: AbortController | null;
  running: Promise<void> | null;
  /** Stopped by the user: no re-evaluation until recalculated. */
  stopped: boolean;
  /** Estimated bytes `results` holds (counted against the runner's results budget). */
  resultBytes: number;
  /** When the results were last read (ms): the least recently read are evicted first. */
  readAt: number;
  /** Results dropped to stay within the memory budget: recomputed on the next read. */
  evicted: boolean;
  /** A report's or export's own query: not counted as one of the owner's live queries, never shared. */
  internal: boolean;
  /** The version of the shared state this copy holds (cluster mode; 0 before the first). */
  version: number;
  /** The job store's operations on this job, one after another (claims and saves in order). */
  serial: Promise<unknown>;
}

/** What a job is made from: its stored definition, its parsed filter and its owner's scope. */
export interface JobDefinition {
  row: QueryRow;
  filter: FilterNode;
  scope: ReadScope;
}

/** A query's stored definition, as the metadata store keeps it (its `queries` row). */
export interface QueryRow {
  query_id: string;
  owner_id: number;
  type: string;
  /** JSON of the params with defaults filled in. */
  params: string;
  created_at: string;
}

export const inProgress = (job: QueryJob) => job.status === 'PENDING' || job.status === 'IN_PROGRESS';

/**
 * What a failed computation shows as `error`: the message of an error the service made
 * for clients (AppError), never an engine's own text.
 */
export function publicMessage(error: unknown): string {
  return error instanceof AppError
    ? error.message
    : 'The query could not be computed because of an internal error in the event store.';
}

export type JobListener = (job: QueryJob) => void;

/** The part of a job every node reads. */
export function stateOf(job: QueryJob): JobState {
  return {
    status: job.status,
    progress: job.progress,
    error: job.error,
    baseMs: job.baseMs,
    window: job.window,
    updatedAt: job.updatedAt,
    stopped: job.stopped,
    results: job.results,
    scopeKey: job.scope.key,
  };
}

/** A new job (PENDING, nothing computed) from a stored definition, its window resolved now. */
export function newJob(
  row: QueryRow,
  filter: FilterNode,
  scope: ReadScope,
  internal: boolean,
  scopeFixed = false,
): QueryJob {
  const params = JSON.parse(row.params) as CommonParamValues;
  const now = Date.now();
  return {
    id: row.query_id,
    ownerId: row.owner_id,
    type: row.type as QueryTypeName,
    def: QUERY_TYPE_DEFS[row.type as QueryTypeName],
    params,
    filter,
    scope,
    scopeFixed,
    createdAt: row.created_at,
    status: 'PENDING',
    results: null,
    progress: 0,
    error: null,
    baseMs: now,
    window: resolveTimeRange(params.time_range, now),
    updatedAt: new Date(now).toISOString(),
    controller: null,
    running: null,
    stopped: false,
    resultBytes: 0,
    readAt: now,
    evicted: false,
    internal,
    version: 0,
    serial: Promise.resolve(),
  };
}
