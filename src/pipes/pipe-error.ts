import { MAX_TABLE_ROWS } from './program.js';

/** A problem in a pipe, at an offset of the whole query. */
export class PipeError extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(message);
  }
}

/** Checks what the grammar cannot: numbers in range. */
export function checkCount(n: number, at: number, what: string): number {
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_TABLE_ROWS)
    throw new PipeError(
      `${what} must be a whole number from 1 to ${MAX_TABLE_ROWS.toLocaleString('en-US')}`,
      at,
    );
  return n;
}
