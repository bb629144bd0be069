import { type TLiteral, type TSchema, type TUnion, Type } from 'typebox';

/**
 * Building blocks of the resource schemas. Each resource's TypeBox schema, beside the
 * service that owns it, is the one declaration of its shape: routes validate and document
 * with it, and the service's type is `Static<typeof …Schema>`.
 */
export const IsoDateTime = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> };

/**
 * One of a list of strings, as a union of literals (the API document's `anyOf`), typed
 * as the list's own union, not as `string`.
 */
export const OneOf = <const T extends readonly string[]>(
  values: T,
  options?: Parameters<typeof Type.Union>[1],
): TUnion<Literals<T>> =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as unknown as TUnion<Literals<T>>;
