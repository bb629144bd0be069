import { type TSchema, Type } from 'typebox';
import { BOOLEAN_PATTERN } from '../../errors/error-handler.js';

/** A query-string boolean: true/false/1/0/yes/no in any case. */
export const QueryBoolean = (description?: string) =>
  Type.String({ pattern: BOOLEAN_PATTERN, ...(description ? { description } : {}) });

export const parseBoolean = (value: string | undefined): boolean | undefined =>
  value === undefined ? undefined : ['true', '1', 'yes'].includes(value.toLowerCase());

export const ErrorSchema = Type.Object(
  {
    detail: Type.String(),
    code: Type.String(),
    errors: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
    request_id: Type.Optional(Type.String()),
    id: Type.Optional(
      Type.String({
        description: 'The object the error is about, where it names one (a backup running already).',
      }),
    ),
  },
  { $id: 'Error', description: 'Every error has this shape.' },
);

const errorRef = Type.Ref('Error');

/** The error responses a route documents, by status. */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, errorRef])) as Record<number, TSchema>;

/** Pagination, ordering and visibility parameters shared by list endpoints. */
export const ListQuery = {
  page: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'Page number, from 1.' }),
  ),
  page_size: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: 'Results per page (default 50; values above 1000 are clamped).',
    }),
  ),
  ordering: Type.Optional(
    Type.String({ description: 'Comma-separated field names, `-` prefix for descending.' }),
  ),
};

export const ShowAllQuery = {
  show_all: Type.Optional(QueryBoolean('Lift the owner restriction (needs the matching permission).')),
};

export const ExportQuery = {
  export: Type.Optional(QueryBoolean('Return only exportable fields.')),
};

/** The envelope of every paginated list. */
export const Paginated = <T extends TSchema>(name: string, item: T) =>
  Type.Object(
    {
      count: Type.Integer(),
      next: Type.Union([Type.String(), Type.Null()]),
      previous: Type.Union([Type.String(), Type.Null()]),
      results: Type.Array(item),
    },
    { title: `Paginated${name}List` },
  );
