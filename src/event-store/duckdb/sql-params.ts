import type { DuckDBValue } from '@duckdb/node-api';

/**
 * The bound values of one statement. SQL is composed from fragments whose every value
 * goes through `add`, so no value is ever written into the SQL text and no value needs
 * escaping; the only names written into SQL are column identifiers, via `quoteIdent`.
 */
export class SqlParams {
  readonly values: DuckDBValue[] = [];

  /** Binds `value` and returns its placeholder (`$1`, `$2`, ...). */
  add(value: DuckDBValue): string {
    this.values.push(value);
    return `$${this.values.length}`;
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
