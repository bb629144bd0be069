/**
 * Severity: a string column with an order of its own, lowered here to plain string
 * conditions so that every backend (the evaluator, DuckDB, ClickHouse) gets the order
 * without knowing about it.
 */
import { SEVERITIES, SEVERITY_ALIASES, type Severity } from '../core/event.js';
import { own } from '../core/own.js';
import type { CondNode, FilterNode, RangeValue, Scalar } from './ast.js';
import { cond, not, TRUE } from './builders.js';
import { parseNumeric } from './values.js';

/** Severities from least to most severe: the order `severity` compares and sorts by. */
export const SEVERITY_ORDER: readonly Severity[] = Object.freeze([...SEVERITIES].reverse());

const SEVERITY_RANKS: ReadonlyMap<string, number> = new Map(SEVERITY_ORDER.map((s, i) => [s, i]));

/** The rank of a stored severity (debug 0 … emergency 7); undefined for anything else. */
export const severityRank = (stored: string | number | null | undefined): number | undefined =>
  typeof stored === 'string' ? SEVERITY_RANKS.get(stored) : undefined;

/** Pino's (and bunyan's) numeric levels. */
const PINO_LEVELS: Readonly<Record<string, Severity>> = {
  10: 'debug',
  20: 'debug',
  30: 'info',
  40: 'warning',
  50: 'error',
  60: 'critical',
};

/**
 * The one severity parser, for a record's level at intake and a filter's value alike: a
 * name or alias in any case (`err`, `WARN`), a syslog code 0–7 (3 is error) or a pino
 * level 10–60 (30 is info), as a number or numeric text; undefined otherwise.
 */
export function parseSeverityValue(v: unknown): Severity | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  const key = String(v).trim().toLowerCase();
  if (Object.hasOwn(SEVERITY_ALIASES, key)) return SEVERITY_ALIASES[key];
  const code = parseNumeric(typeof v === 'string' ? v.trim() : v);
  if (code === undefined || !Number.isInteger(code)) return undefined;
  return code >= 0 && code <= 7 ? SEVERITIES[code] : own(PINO_LEVELS, String(code));
}

/** The field whose values are severities. */
export const SEVERITY_FIELD = 'severity';

/** Matches no event (`NOT *`): what a relation no severity satisfies lowers to. */
export const NOTHING: FilterNode = not(TRUE);

const canonicalSeverity = (v: Scalar): Scalar => parseSeverityValue(v) ?? v;

const RANK_TESTS = {
  gt: (rank: number, bound: number) => rank > bound,
  gte: (rank: number, bound: number) => rank >= bound,
  lt: (rank: number, bound: number) => rank < bound,
  lte: (rank: number, bound: number) => rank <= bound,
} as const;

/** The severities (rank order) whose rank satisfies `op value`; undefined when the value names none. */
function severitiesWhere(op: keyof typeof RANK_TESTS, value: Scalar): Severity[] | undefined {
  const named = parseSeverityValue(value);
  if (named === undefined) return undefined;
  const bound = SEVERITY_RANKS.get(named)!;
  return SEVERITY_ORDER.filter((_, rank) => RANK_TESTS[op](rank, bound));
}

/** The severities inside the inclusive range; undefined when a bound names none. */
function severitiesBetween([lo, hi]: RangeValue): Severity[] | undefined {
  const above = severitiesWhere('gte', lo);
  const below = severitiesWhere('lte', hi);
  return above === undefined || below === undefined ? undefined : above.filter((s) => below.includes(s));
}

/**
 * A condition in the terms every backend already knows, or the node itself when it needs
 * no change (so `lowerCond(n) === n` ends a backend's recursion). Only `severity`
 * changes: equality values naming a severity become its canonical name (`err`, `ERROR`
 * and `3` all mean `error`; other values stay as they are and match nothing ingest
 * stores), and relations compare by rank (debug < info < … < emergency) as the `in`
 * list of the names that satisfy them; a relation whose value names no severity (which
 * validation refuses) matches nothing. Text operators, regex and cidr see the stored
 * name as text.
 */
export function lowerCond(node: CondNode): FilterNode {
  if (node.field !== SEVERITY_FIELD) return node;
  switch (node.op) {
    case 'eq':
    case 'ne': {
      const v = canonicalSeverity(node.value);
      return v === node.value ? node : cond(node.field, node.op, v);
    }
    case 'in':
    case 'not_in': {
      const values = node.value.map(canonicalSeverity);
      return values.every((v, i) => v === node.value[i]) ? node : cond(node.field, node.op, values);
    }
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
    case 'between': {
      const names =
        node.op === 'between' ? severitiesBetween(node.value) : severitiesWhere(node.op, node.value);
      return names === undefined || names.length === 0 ? NOTHING : cond(node.field, 'in', names);
    }
    default:
      return node;
  }
}
