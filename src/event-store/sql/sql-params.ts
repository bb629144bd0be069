/**
 * A time bound to a statement: Unix ms. ±Infinity stands for "beyond any stored time";
 * each store's driver turns it into its engine's value (DuckDB: a TIMESTAMP, ±infinity
 * outside its range).
 */
export interface SqlTime {
  readonly time: number;
}

/** A value bound to a statement, as the query layer knows it; drivers convert. */
export type SqlValue = string | number | bigint | boolean | null | SqlTime;

export const sqlTime = (ms: number): SqlTime => ({ time: ms });

/** True for a `SqlTime` (a plain object), not for a driver's own value objects. */
export const isSqlTime = (v: unknown): v is SqlTime =>
  typeof v === 'object' &&
  v !== null &&
  Object.getPrototypeOf(v) === Object.prototype &&
  typeof (v as SqlTime).time === 'number';

/** How a store writes a value into a statement: a placeholder, or (no bound parameters) a literal. */
export type Placeholder = (value: SqlValue, position: number) => string;

const dollar: Placeholder = (_value, position) => `$${position}`;

/**
 * Where a store keeps an extra field in a column of its own (DuckDB: field-columns.ts):
 * the column's name, or undefined when the field lives in the `fields` map only.
 */
export type FieldColumnOf = (field: string) => string | undefined;

const mapOnly: FieldColumnOf = () => undefined;

/**
 * The values of one statement. SQL is composed from fragments whose every value goes
 * through `add`, which returns what stands for it in the text: a placeholder (`$1`, `$2`,
 * ...; DuckDB binds the values) or, for an engine without bound parameters, the one
 * audited literal function's text (ClickHouse 18.16, `clickhouse-literal.ts`). The only
 * names written into SQL are column identifiers, via `quoteIdent`.
 */
export class SqlParams {
  readonly values: SqlValue[] = [];

  constructor(
    private readonly placeholder: Placeholder = dollar,
    /** Where the statement's store keeps extra fields (compilers read a field through it). */
    readonly columnOf: FieldColumnOf = mapOnly,
  ) {}

  /** Adds `value` and returns what stands for it in the SQL text. */
  add(value: SqlValue): string {
    this.values.push(value);
    return this.placeholder(value, this.values.length);
  }
}

/**
 * A column name as a SQL identifier: always quoted, because some columns are reserved
 * words (`user`) and a quoted name is never read as a keyword.
 */
export function quoteIdent(name: string): string {
  // DuckDB cannot represent NUL in an identifier; refusing beats a confusing parse error.
  if (name.includes('\u0000')) throw new Error('A SQL identifier cannot contain NUL');
  return `"${name.replaceAll('"', '""')}"`;
}
