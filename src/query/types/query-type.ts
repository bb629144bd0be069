import { type TObject, type TSchema, Type } from 'typebox';
import type { TimeWindow, UnscopedPlan } from '../../event-store/query-plan.js';
import type { FilterNode } from '../../filter/ast.js';
import type { EventLike } from '../../filter/evaluate.js';
import { type TimeRangeParam, TimeRangeSchema } from '../time-range.js';

export const QUERY_TYPES = [
  'Search',
  'TopN',
  'LastN',
  'Summary',
  'Timeline',
  'Patterns',
  'Table',
  'Explain',
  'Metric',
] as const;
export type QueryTypeName = (typeof QUERY_TYPES)[number];

/** Parameters every type takes. */
export const CommonParams = {
  time_range: TimeRangeSchema,
  filter: Type.Array(Type.Unknown(), { default: [], description: 'Conditions, all of which must hold.' }),
  query: Type.String({
    default: '',
    maxLength: 10_000,
    description: 'Query-language string, AND-ed with filter.',
  }),
  streams: Type.Optional(
    Type.Array(Type.Integer({ minimum: 1 }), {
      maxItems: 1000,
      description:
        'Only the events of these streams (ids); default: every stream the caller may read. An unknown or unreadable stream is a 400.',
    }),
  ),
  use_rollups: Type.Optional(
    Type.Boolean({
      description:
        'Whether a qualifying query may answer from the built-in rollups (default true; false: from the events, for comparison). `answered_from` says what answered.',
    }),
  ),
};

export interface CommonParamValues {
  time_range: TimeRangeParam;
  filter: unknown[];
  query: string;
  streams?: number[];
  use_rollups?: boolean;
}

/** Field names in params: letters, digits, `_ . - @` (as in filters). */
export const FieldName = (description: string) =>
  Type.String({ minLength: 1, maxLength: 256, pattern: '^[A-Za-z0-9_.@-]+$', description });

/** Read-time options of a representation (query-string flags of GET /api/query/{qid}). */
export interface PresentOptions {
  page?: number;
  pageSize?: number;
  offset?: number;
  actionsHint?: boolean;
  addTriggerData?: boolean;
  addGeoipData?: boolean;
}

/**
 * One query type: its params schema (with defaults), its result layout, how it becomes a
 * store plan, whether it can be computed in disjoint time slices (and how slices merge
 * exactly), and how its results are presented.
 */
/** What answers a query (docs/api/queries.md "answered_from"): the events, counts kept at ingest, or both. */
export type AnsweredFrom = 'events' | 'rollups' | 'both';

export interface QueryTypeDef<P extends CommonParamValues = CommonParamValues, R = unknown> {
  readonly name: QueryTypeName;
  /** What answers this type's queries; `events` when absent (no built-in rollups yet, ADR 0035). */
  readonly answeredFrom?: AnsweredFrom;
  readonly description: string;
  readonly params: TObject;
  readonly results: TSchema;
  /**
   * The store plan for `window`; `whole`: the evaluation's window when `window` is one of
   * its slices (what depends on the whole range, such as a timeline's `auto` interval).
   */
  plan(params: P, filter: FilterNode, window: TimeWindow, whole?: TimeWindow): UnscopedPlan;
  /** Slice order when the type can be sliced for these params, else null (one statement). */
  slicing(params: P): 'newest-first' | 'oldest-first' | null;
  merge(acc: R, part: R, params: P): R;
  /** Slice boundaries must be multiples of this (ms), e.g. a timeline's bucket size. */
  align?(params: P, window: TimeWindow): number;
  present(results: R, params: P, opts: PresentOptions & { window: TimeWindow }): unknown;
  /**
   * Live folding (src/features/live/live-hub.ts): results plus matching events committed after they
   * were computed, in memory, so a watched query updates within moments of an ingest
   * without asking the engine. `accepts` tells for which params the type can; `apply`
   * returns new results and never changes its arguments. Each type says where the
   * fold is exact; the hub's full evaluation every refresh interval is exact again.
   */
  fold?: {
    accepts(params: P): boolean;
    apply(results: R, events: readonly EventLike[], params: P, window: TimeWindow): R;
  };
}

export const withCommon = (specific: Record<string, TSchema>) =>
  Type.Object({ ...CommonParams, ...specific }, { additionalProperties: false });
