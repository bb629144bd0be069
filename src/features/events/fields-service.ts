import { COLUMN_KINDS, type EventColumn } from '../../core/event.js';
import type { Identity } from '../../core/identity.js';
import { presentEvent } from '../../core/present-event.js';
import type { EventStore } from '../../event-store/event-store.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import { resolveTimeRange } from '../../query/time-range.js';
import { Search, type SearchParams } from '../../query/types/search.js';
import { validateQuery } from '../../query/validate.js';

/** Events a field list is computed from: the newest this many matches. */
export const FIELDS_SAMPLE = 10_000;
/** Top values listed per field. */
export const FIELDS_TOP = 5;

export type FieldType = 'string' | 'number' | 'ip' | 'time';

export interface FieldInfo {
  name: string;
  type: FieldType;
  /** Sampled events that have the field (not null). */
  count: number;
  top: Array<{ value: string | number | boolean; count: number }>;
}

export interface FieldsResult {
  fields: FieldInfo[];
  /** Whether more events matched than were looked at. */
  sampled: boolean;
  /** Events looked at. */
  events: number;
  /** Events that matched. */
  total: number;
}

/** Bookkeeping fields of every event: always there, never worth a filter from a field list. */
const SKIPPED = new Set(['ev_id', 'received_at', 'stored_at']);

const IPV4 = /^(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;

function typeOf(name: string, value: unknown): FieldType {
  const column = COLUMN_KINDS[name as EventColumn];
  if (column === 'time') return 'time';
  if (column === 'ip') return 'ip';
  if (column === 'integer' || typeof value === 'number') return 'number';
  if (
    typeof value === 'string' &&
    (IPV4.test(value) || (value.includes(':') && /^[0-9a-f:.]+$/i.test(value)))
  )
    return 'ip';
  return 'string';
}

/** A value as a field list shows and filters by it: objects and arrays as compact JSON text. */
function shown(value: unknown): string | number | boolean {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return JSON.stringify(value);
}

interface Tally {
  type: FieldType;
  typeSeen: boolean;
  count: number;
  values: Map<string | number | boolean, number>;
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
    if (plan.kind !== 'search') throw new Error('a Search plans a search');
    const result = await this.store.execute({ ...plan, scope: await this.scopes.of(who) });
    const tallies = new Map<string, Tally>();
    for (const stored of result.events) {
      const event = presentEvent(stored);
      for (const name in event) {
        const value = event[name];
        if (value === null || value === undefined || SKIPPED.has(name)) continue;
        let t = tallies.get(name);
        if (!t) {
          t = { type: typeOf(name, value), typeSeen: true, count: 0, values: new Map() };
          tallies.set(name, t);
        } else if (t.type !== 'string' && t.type !== 'time' && typeOf(name, value) !== t.type) {
          // A field that holds numbers in some events and text in others is text.
          t.type = 'string';
        }
        t.count++;
        // Times are nearly all distinct: no top values for them.
        if (t.type === 'time') continue;
        const v = shown(value);
        t.values.set(v, (t.values.get(v) ?? 0) + 1);
      }
    }
    const fields = [...tallies.entries()]
      .map(([name, t]) => ({
        name,
        type: t.type,
        count: t.count,
        top: [...t.values.entries()]
          .sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0])))
          .slice(0, FIELDS_TOP)
          .map(([value, count]) => ({ value, count })),
      }))
      .sort((a, b) => b.count - a.count || a.name.localeCompare(b.name));
    return {
      fields,
      sampled: result.total > result.events.length,
      events: result.events.length,
      total: result.total,
    };
  }
}
