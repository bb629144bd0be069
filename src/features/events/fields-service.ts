import type { Identity } from '../../core/identity.js';
import type { EventStore } from '../../event-store/event-store.js';
import type { FieldSummary, FieldType } from '../../event-store/query-plan.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import { resolveTimeRange } from '../../query/time-range.js';
import { Search, type SearchParams } from '../../query/types/search.js';
import { validateQuery } from '../../query/validate.js';

/** Events a field list is computed from: the newest this many matches. */
export const FIELDS_SAMPLE = 10_000;
/** Top values listed per field. */
export const FIELDS_TOP = 5;

export type { FieldType };
export type FieldInfo = FieldSummary;

export interface FieldsResult {
  fields: FieldInfo[];
  /** Whether more events matched than were looked at. */
  sampled: boolean;
  /** Events looked at. */
  events: number;
  /** Events that matched. */
  total: number;
}

/**
 * The fields present in the events a query matches, for the web UI's field list and
 * query completion: computed from the newest FIELDS_SAMPLE matches, most common first,
 * each with its type and top values.
 */
export class FieldsService {
  constructor(
    private readonly store: EventStore,
    private readonly scopes: ReadScopes,
  ) {}

  /** The fields of the events `who` may read that the query matches. */
  async fields(who: Identity, input: { query?: string; time_range?: unknown }): Promise<FieldsResult> {
    const valid = validateQuery({
      type: 'Search',
      params: {
        ...(input.query !== undefined ? { query: input.query } : {}),
        ...(input.time_range !== undefined ? { time_range: input.time_range } : {}),
        sort: ['-ts'],
        page_size: FIELDS_SAMPLE,
      },
    });
    const params = valid.params as SearchParams;
    const window = resolveTimeRange(params.time_range, Date.now());
    const plan = Search.plan(params, await this.scopes.narrow(who.userId, valid.filter, undefined), window);
    // Counted in the store (a Fields plan): the sample's values grouped there, read back as
    // one row a value of each field's most common, not as 10,000 events.
    const result = await this.store.execute({
      kind: 'fields',
      filter: plan.filter,
      range: plan.range,
      scope: await this.scopes.of(who),
      sample: FIELDS_SAMPLE,
      top: FIELDS_TOP,
    });
    return {
      fields: result.fields,
      sampled: result.total > result.events,
      events: result.events,
      total: result.total,
    };
  }
}
