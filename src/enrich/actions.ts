import { isIP } from 'node:net';
import { COLUMN_KINDS, type EventColumn, type FieldKind } from '../core/event.js';

/**
 * `actions_hint`: for each field of the returned events, the actions a
 * client can offer on its values, each saying what the client sends to perform it.
 *
 * Two placeholders keep one hint valid for every event of a page:
 * - a filter condition without `value` takes the value the action is applied to;
 * - `{ev_id}` in `path` or in a string of `body` stands for the event's id.
 */

export const ACTION_IDS = [
  'filter_in',
  'filter_out',
  'top_values',
  'geoip',
  'open_event',
  'create_task',
] as const;
export type ActionId = (typeof ACTION_IDS)[number];

/**
 * How a field is treated: the column kinds of core/event.ts, plus `id` (ev_id: unique, so
 * it opens the event rather than filtering), `text` (message: free text, nearly every value
 * distinct) and `raw` (the record as received: an object, nothing to act on). Extra fields
 * are `ip` when every value shown is an IP address, else `string`.
 */
export type ActionFieldKind = FieldKind | 'id' | 'text' | 'raw';

/** A filter condition for the query's `filter`, its `value` left to the client. */
export interface HintCondition {
  field: string;
  op: 'eq' | 'ne';
}

/** One action on one field, as `actions[field]` lists it. */
export interface ActionHint {
  id: ActionId;
  title: string;
  /** Add to the current query's `filter` (with `value`) and run it again. */
  filter?: HintCondition;
  /** Or send this request. */
  method?: 'GET' | 'POST';
  path?: string;
  body?: Record<string, unknown>;
}

/** The Search the hints come from, so a TopN they suggest covers the same events. */
export interface ActionScope {
  time_range?: unknown;
  filter?: readonly unknown[];
  query?: string;
}

/** One entry of the registry: the kinds of field it applies to and its hint. */
export interface ActionDef {
  readonly title: string;
  readonly kinds: readonly ActionFieldKind[];
  hint(field: string, scope: ActionScope): Omit<ActionHint, 'id' | 'title'>;
}

const VALUE_KINDS: readonly ActionFieldKind[] = ['string', 'integer', 'ip'];

export const ACTIONS: Record<ActionId, ActionDef> = {
  filter_in: {
    title: 'Filter for value',
    kinds: [...VALUE_KINDS, 'text'],
    hint: (field) => ({ filter: { field, op: 'eq' } }),
  },
  filter_out: {
    title: 'Filter out value',
    kinds: [...VALUE_KINDS, 'text'],
    hint: (field) => ({ filter: { field, op: 'ne' } }),
  },
  // Not on message: a TopN of free text counts nearly unique values.
  top_values: {
    title: 'Top values',
    kinds: VALUE_KINDS,
    hint: (field, scope) => ({
      method: 'POST',
      path: '/api/query',
      body: { type: 'TopN', params: { ...scope, field } },
    }),
  },
  // The TopN of this one value, within the events it was seen in, with its `geo`.
  geoip: {
    title: 'GeoIP lookup',
    kinds: ['ip'],
    hint: (field, scope) => ({
      method: 'POST',
      path: '/api/query?add_geoip_data=true',
      body: {
        type: 'TopN',
        params: { ...scope, field, n: 1, filter: [...(scope.filter ?? []), { field, op: 'eq' }] },
      },
    }),
  },
  open_event: {
    title: 'Open event',
    kinds: ['id'],
    hint: () => ({ method: 'GET', path: '/api/events/{ev_id}' }),
  },
  create_task: {
    title: 'Create task',
    kinds: ['id'],
    hint: () => ({
      method: 'POST',
      path: '/api/tasks',
      body: { title: 'Investigate event {ev_id}', ev_ids: ['{ev_id}'] },
    }),
  },
};

const SPECIAL_KINDS = new Map<string, ActionFieldKind>([
  ['ev_id', 'id'],
  ['message', 'text'],
  ['raw', 'raw'],
]);

/** How a field is treated, from its name and the values shown for it (all non-null). */
export function fieldKind(field: string, values: readonly unknown[]): ActionFieldKind {
  const special = SPECIAL_KINDS.get(field);
  if (special) return special;
  if (Object.hasOwn(COLUMN_KINDS, field)) return COLUMN_KINDS[field as EventColumn];
  return values.length > 0 && values.every((v) => typeof v === 'string' && isIP(v) !== 0) ? 'ip' : 'string';
}

/** The hints for one field, in registry order (empty for time fields and `raw`). */
export function actionsForField(field: string, kind: ActionFieldKind, scope: ActionScope = {}): ActionHint[] {
  return ACTION_IDS.filter((id) => ACTIONS[id].kinds.includes(kind)).map((id) => ({
    id,
    title: ACTIONS[id].title,
    ...ACTIONS[id].hint(field, scope),
  }));
}

/**
 * `actions` for a page of events: one entry for every field that has a value (not null)
 * in at least one of them.
 */
export function actionsForEvents(
  events: readonly Record<string, unknown>[],
  scope: ActionScope = {},
): Record<string, ActionHint[]> {
  const values = new Map<string, unknown[]>();
  for (const event of events) {
    for (const [field, value] of Object.entries(event)) {
      if (value === null || value === undefined) continue;
      const seen = values.get(field);
      if (seen) seen.push(value);
      else values.set(field, [value]);
    }
  }
  const actions: Record<string, ActionHint[]> = {};
  for (const [field, seen] of values) actions[field] = actionsForField(field, fieldKind(field, seen), scope);
  return actions;
}
