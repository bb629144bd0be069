/**
 * The grammar's helpers for the filter part of a query (`options.helpers`, see grammar.ts):
 * they turn the raw pieces the actions hand over (words as character segments, value
 * descriptors, locations) into the filter AST, checking values at their position. The
 * rules they implement are parse-query.ts's header.
 */
import { isIP } from 'node:net';
import {
  and,
  cond,
  FILTER_LIMITS,
  type FilterNode,
  type FilterOp,
  not,
  or,
  parseCidr,
  parseNumeric,
  type Scalar,
  TRUE,
  text,
} from '../filter/ast.js';
import { buildCondition, checkFieldName } from '../filter/conditions.js';
import { escapeRegex } from '../filter/regex.js';
import { type Location, ValueError } from './query-errors.js';

// Shapes the grammar's actions produce (see grammar.ts).
type Segment = { readonly c: string; readonly escaped?: true } | { readonly star: true };
type Bound = { readonly star: true } | { readonly s: string; readonly quoted: boolean };
type RelOp = '>=' | '<=' | '>' | '<';
type ValueDesc =
  | { readonly t: 'or' | 'and'; readonly items: readonly ValueDesc[] }
  | { readonly t: 'unary'; readonly ops: readonly boolean[]; readonly item: ValueDesc }
  | {
      readonly t: 'range';
      readonly open: '[' | '{';
      readonly lo: Bound;
      readonly hi: Bound;
      readonly close: ']' | '}';
      readonly loc: Location;
    }
  | {
      readonly t: 'rel';
      readonly op: RelOp;
      readonly v: { s: string; quoted: boolean };
      readonly loc: Location;
    }
  | { readonly t: 'regex' | 'quoted'; readonly s: string; readonly loc: Location }
  | { readonly t: 'bare'; readonly segs: readonly Segment[]; readonly loc: Location };

/** The field `field:word` searches like a bare word rather than comparing exactly. */
const MESSAGE = 'message';

const REL_OPS: Readonly<Record<RelOp, FilterOp>> = { '>=': 'gte', '<=': 'lte', '>': 'gt', '<': 'lt' };

const isStar = (s: Segment): s is { readonly star: true } => 'star' in s;

/** Literal chunks between runs of unescaped `*`, and whether the value starts / ends with one. */
function wildcard(segs: readonly Segment[]) {
  const chunks: string[] = [];
  let current = '';
  for (const s of segs) {
    if (isStar(s)) {
      if (current !== '') chunks.push(current);
      current = '';
    } else current += s.c;
  }
  if (current !== '') chunks.push(current);
  const first = segs[0];
  const last = segs[segs.length - 1];
  return {
    chunks,
    leading: first !== undefined && isStar(first),
    trailing: last !== undefined && isStar(last),
  };
}

function condition(field: string, op: FilterOp, value: unknown, loc: Location): FilterNode {
  const result = buildCondition(field, op, value);
  if (!result.ok) throw new ValueError(`invalid value for "${field}": ${result.message}`, loc.start);
  return result.node;
}

/**
 * A bare word: a case-insensitive substring of the message. Leading and trailing `*`
 * drop out; inner ones make a case-insensitive regex; `*` alone matches everything.
 */
function wordNode(segs: readonly Segment[]): FilterNode {
  const { chunks } = wildcard(segs);
  const [only] = chunks;
  if (only === undefined) return TRUE;
  if (chunks.length === 1) return text(only);
  // Inner wildcards: the same case-insensitive substring search, as a regex.
  return cond(MESSAGE, 'regex', `(?is)${chunks.map(escapeRegex).join('.*')}`);
}

function bareValue(field: string, segs: readonly Segment[], loc: Location): FilterNode {
  const { chunks, leading, trailing } = wildcard(segs);
  if (!segs.some(isStar)) {
    const literal = chunks.join('');
    const slash = literal.lastIndexOf('/');
    // Only an unescaped address/prefix is a CIDR; escaping or quoting keeps it literal.
    if (slash > 0 && !segs.some((s) => 'escaped' in s) && isIP(literal.slice(0, slash)) !== 0) {
      if (parseCidr(literal) === undefined) {
        throw new ValueError(`invalid CIDR block "${literal}" for "${field}"`, loc.start);
      }
      return condition(field, 'cidr', literal, loc);
    }
    if (field === MESSAGE) return wordNode(segs);
    return condition(field, 'eq', literal, loc);
  }
  const [only] = chunks;
  if (only === undefined) return condition(field, 'exists', undefined, loc);
  if (field === MESSAGE) return wordNode(segs);
  if (chunks.length === 1) {
    if (leading && trailing) return condition(field, 'contains', only, loc);
    return condition(field, leading ? 'endswith' : 'startswith', only, loc);
  }
  const pattern = `${leading ? '' : '^'}${chunks.map(escapeRegex).join('.*')}${trailing ? '' : '$'}`;
  return condition(field, 'regex', pattern, loc);
}

function boundValue(b: Bound, numeric: boolean): string | number | undefined {
  if ('star' in b) return undefined;
  return numeric ? Number(b.s) : b.s;
}

function rangeValue(field: string, d: Extract<ValueDesc, { t: 'range' }>): FilterNode {
  const bounds = [d.lo, d.hi].filter((b): b is { s: string; quoted: boolean } => !('star' in b));
  // Numbers only when every given bound is an unquoted number; otherwise both strings.
  const numeric = bounds.every((b) => !b.quoted && parseNumeric(b.s) !== undefined);
  const lo = boundValue(d.lo, numeric);
  const hi = boundValue(d.hi, numeric);
  const loInclusive = d.open === '[';
  const hiInclusive = d.close === ']';
  if (lo !== undefined && hi !== undefined && loInclusive && hiInclusive) {
    return condition(field, 'between', [lo, hi], d.loc);
  }
  const parts: FilterNode[] = [];
  if (lo !== undefined) parts.push(condition(field, loInclusive ? 'gte' : 'gt', lo, d.loc));
  if (hi !== undefined) parts.push(condition(field, hiInclusive ? 'lte' : 'lt', hi, d.loc));
  return parts.length === 0 ? condition(field, 'exists', undefined, d.loc) : and(...parts);
}

/** `f:(a OR b)` of plain values is `f in [a, b]`; nested groups merge. */
function foldIn(field: string, items: readonly FilterNode[]): FilterNode | undefined {
  const values: Scalar[] = [];
  for (const item of items) {
    if (item.kind !== 'cond' || item.field !== field) return undefined;
    if (item.op === 'eq') values.push(item.value);
    else if (item.op === 'in') values.push(...item.value);
    else return undefined;
  }
  return values.length <= FILTER_LIMITS.maxNodes ? cond(field, 'in', values) : undefined;
}

function applyNegations(ops: readonly boolean[], item: FilterNode): FilterNode {
  // `+` (false) only marks a required term, which every term already is.
  const negations = ops.filter(Boolean).length;
  return negations % 2 === 1 ? not(item) : item;
}

function fieldValue(field: string, d: ValueDesc): FilterNode {
  switch (d.t) {
    case 'or': {
      const items = d.items.map((i) => fieldValue(field, i));
      const [first, ...rest] = items;
      if (first === undefined) return TRUE;
      return rest.length === 0 ? first : (foldIn(field, items) ?? or(first, ...rest));
    }
    case 'and':
      return and(...d.items.map((i) => fieldValue(field, i)));
    case 'unary':
      return applyNegations(d.ops, fieldValue(field, d.item));
    case 'range':
      return rangeValue(field, d);
    case 'rel': {
      const value = !d.v.quoted && parseNumeric(d.v.s) !== undefined ? Number(d.v.s) : d.v.s;
      return condition(field, REL_OPS[d.op], value, d.loc);
    }
    case 'regex':
      return condition(field, 'regex', d.s, d.loc);
    case 'quoted':
      return field === MESSAGE ? text(d.s, true) : condition(field, 'eq', d.s, d.loc);
    case 'bare':
      return bareValue(field, d.segs, d.loc);
    default:
      return d satisfies never;
  }
}

function checkField(field: string, loc: Location): void {
  const problem = checkFieldName(field);
  if (problem !== undefined) throw new ValueError(`field name ${problem}`, loc.start);
}

/** The filter part's helpers of the grammar. */
export const filterHelpers = {
  or: (head: FilterNode, tail: readonly FilterNode[]) => or(head, ...tail),
  and: (head: FilterNode, tail: readonly FilterNode[]) => and(head, ...tail),
  unary: applyNegations,
  all: () => TRUE,
  exists(field: string, loc: Location): FilterNode {
    checkField(field, loc);
    return cond(field, 'exists');
  },
  field(field: string, value: ValueDesc, loc: Location): FilterNode {
    checkField(field, loc);
    return fieldValue(field, value);
  },
  messageRegex: (pattern: string, loc: Location) => condition('message', 'regex', pattern, loc),
  phrase: (value: string) => text(value, true),
  word: wordNode,
};
