import { Type } from 'typebox';
import { presentEvent } from '../../core/present-event.js';
import type { SearchResult } from '../../event-store/query-plan.js';
import { type CommonParamValues, FieldName, type QueryTypeDef, withCommon } from './query-type.js';

export const MAX_SEARCH_PAGE_SIZE = 10_000;

export interface SearchParams extends CommonParamValues {
  sort: string[];
  page: number;
  page_size: number;
  fields?: string[];
}

const SortTerm = Type.String({ minLength: 1, maxLength: 257, pattern: '^-?[A-Za-z0-9_.@-]+$' });

export const parseSort = (sort: string[]) =>
  sort.map((s) => (s.startsWith('-') ? { field: s.slice(1), desc: true } : { field: s, desc: false }));

export const Search: QueryTypeDef<SearchParams, SearchResult> = {
  name: 'Search',
  description: 'Matching events, sorted and paged, with the total number of matches.',
  params: withCommon({
    sort: Type.Array(SortTerm, {
      default: ['-ts'],
      maxItems: 10,
      description: 'Fields, `-` for descending.',
    }),
    page: Type.Integer({
      minimum: 1,
      default: 1,
      description: 'From 1; page × page_size must stay below 2^53.',
    }),
    page_size: Type.Integer({ minimum: 1, maximum: MAX_SEARCH_PAGE_SIZE, default: 50 }),
    fields: Type.Optional(
      Type.Array(FieldName('A field to return'), { maxItems: 200, description: 'Projection.' }),
    ),
  }),
  results: Type.Object({
    total: Type.Integer(),
    page: Type.Integer(),
    page_size: Type.Integer(),
    offset: Type.Integer(),
    events: Type.Array(Type.Object({}, { additionalProperties: true })),
    actions: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Array(Type.Object({ id: Type.String(), title: Type.String() }, { additionalProperties: true })),
        {
          description:
            'With actions_hint=true: per field present, the actions that apply (src/enrich/actions.ts).',
        },
      ),
    ),
  }),
  plan: (p, filter, range) => ({
    kind: 'search',
    filter,
    range,
    sort: parseSort(p.sort),
    limit: p.page * p.page_size,
    offset: 0,
    count: true,
  }),
  slicing: (p) => {
    const first = p.sort[0];
    if (p.sort.length !== 1) return null;
    if (first === '-ts') return 'newest-first';
    if (first === 'ts') return 'oldest-first';
    return null;
  },
  merge: (acc, part, p) => ({
    total: acc.total + part.total,
    events:
      acc.events.length >= p.page * p.page_size
        ? acc.events
        : [...acc.events, ...part.events].slice(0, p.page * p.page_size),
  }),
  present: (r, p, opts) => {
    const pageSize = opts.pageSize ?? p.page_size;
    const offset = opts.offset ?? ((opts.page ?? p.page) - 1) * pageSize;
    const page = Math.floor(offset / pageSize) + 1;
    const first = offset - (r.eventsOffset ?? 0);
    const events = r.events.slice(first, first + pageSize).map((e) => {
      const full = presentEvent(e);
      if (!p.fields) return full;
      const picked: Record<string, unknown> = { ev_id: full.ev_id, ts: full.ts };
      for (const f of p.fields) if (f in full) picked[f] = full[f];
      return picked;
    });
    return { total: r.total, page, page_size: pageSize, offset, events };
  },
};
