/**
 * The words of the pipes part of a query (docs/query-language.md#pipes): the server's
 * grammar and resolver (filter/pipes) and the web UI's query box (its highlighting and
 * completion) read them from here.
 */

/** The pipes, as written after `|`. */
export const PIPE_NAMES = [
  'stats',
  'top',
  'timechart',
  'patterns',
  'fields',
  'sort',
  'limit',
  'where',
  'extract',
  'rex',
  'rename',
  'eval',
] as const;

/** The aggregates of `stats` and `timechart`. */
export const AGG_OPS = [
  'count',
  'count_distinct',
  'sum',
  'avg',
  'min',
  'max',
  'p50',
  'p90',
  'p95',
  'p99',
] as const;

/** The functions of `eval` (and `where`). */
export const EVAL_FUNCTIONS = ['concat', 'lower', 'upper', 'len'] as const;
