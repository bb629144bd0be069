/**
 * The one filter AST: the JSON `filter` conditions and
 * the query-language string both become this, and every backend (the JavaScript
 * evaluator for triggers, the DuckDB and ClickHouse compilers) consumes it. Nodes are
 * immutable: built only by the constructors below, which freeze them and keep them in a
 * simplified normal form (flat and/or, no `true` inside `and`, no double negation).
 *
 * The value coercions at the bottom (`parseNumeric`, `toTimeMs`, `parseCidr`,
 * `scalarToString`) define what a value means for each column kind; every backend must
 * use them instead of its own rules so that all of them match the same events.
 */
import { isIP } from 'node:net';
import { SEVERITIES, SEVERITY_ALIASES, type Severity } from '../core/event.js';
import { own } from '../core/own.js';
import { parseIsoMs } from '../core/time.js';

export type Scalar = string | number | boolean;

export const FILTER_OPS = [
  'eq',
  'ne',
  'in',
  'not_in',
  'contains',
  'not_contains',
  'startswith',
  'endswith',
  'regex',
  'gt',
  'gte',
  'lt',
  'lte',
  'between',
  'exists',
  'not_exists',
  'cidr',
] as const;

export type FilterOp = (typeof FILTER_OPS)[number];

/**
 * The shape of the value each operator takes. Relational operators take a number or a
 * string (never a boolean: an ordering of booleans means nothing to a user).
 */
export const OP_VALUE_SHAPE = {
  eq: 'scalar',
  ne: 'scalar',
  in: 'list',
  not_in: 'list',
  contains: 'string',
  not_contains: 'string',
  startswith: 'string',
  endswith: 'string',
  regex: 'string',
  gt: 'ordered',
  gte: 'ordered',
  lt: 'ordered',
  lte: 'ordered',
  between: 'range',
  exists: 'none',
  not_exists: 'none',
  cidr: 'string',
} as const satisfies Record<FilterOp, ValueShape>;

export type ValueShape = 'scalar' | 'ordered' | 'list' | 'range' | 'string' | 'none';

/** Inclusive bounds of `between`: both numbers or both strings. */
export type RangeValue = readonly [number, number] | readonly [string, string];

interface ShapeTypes {
  scalar: Scalar;
  ordered: string | number;
  list: readonly Scalar[];
  range: RangeValue;
  string: string;
  none: undefined;
}

/** The value type an operator takes (`undefined` for `exists` / `not_exists`). */
export type OpValue<Op extends FilterOp> = ShapeTypes[(typeof OP_VALUE_SHAPE)[Op]];

type CondFor<Op extends FilterOp> =
  OpValue<Op> extends undefined
    ? { readonly kind: 'cond'; readonly field: string; readonly op: Op }
    : { readonly kind: 'cond'; readonly field: string; readonly op: Op; readonly value: OpValue<Op> };

/** One comparison of a field against a value; `value` is typed by `op`. */
export type CondNode = { [Op in FilterOp]: CondFor<Op> }[FilterOp];

export interface AndNode {
  readonly kind: 'and';
  readonly items: readonly FilterNode[];
}

export interface OrNode {
  readonly kind: 'or';
  readonly items: readonly FilterNode[];
}

export interface NotNode {
  readonly kind: 'not';
  readonly item: FilterNode;
}

/** A bare word or quoted phrase: a case-insensitive substring of `message`. */
export interface TextNode {
  readonly kind: 'text';
  readonly value: string;
  /** Written as a quoted phrase; matching is the same, only rendering differs. */
  readonly phrase?: boolean;
}

/** The empty filter: matches every event. */
export interface TrueNode {
  readonly kind: 'true';
}

export type FilterNode = AndNode | OrNode | NotNode | CondNode | TextNode | TrueNode;

/** Limits shared by both front ends, so a filter that passes one passes the other. */
export const FILTER_LIMITS = Object.freeze({
  /** Nodes on the longest path from the root (a flat list of conditions is 2). */
  maxDepth: 16,
  /** Conditions, groups and `in`/`not_in` list values together. */
  maxNodes: 1000,
});

export const TRUE: TrueNode = Object.freeze({ kind: 'true' });

/**
 * Operators whose negation is another operator. Every backend must treat `ne` as exactly
 * `NOT eq` (and so on), which is what lets `not()` fold them.
 */
export const NEGATED_OP = Object.freeze({
  eq: 'ne',
  ne: 'eq',
  in: 'not_in',
  not_in: 'in',
  contains: 'not_contains',
  not_contains: 'contains',
  exists: 'not_exists',
  not_exists: 'exists',
} as const satisfies Partial<Record<FilterOp, FilterOp>>);

type NegatableOp = keyof typeof NEGATED_OP;

const isNegatable = (op: FilterOp): op is NegatableOp => Object.hasOwn(NEGATED_OP, op);

/** Builds a frozen condition. `exists` / `not_exists` take no value. */
export function cond<Op extends FilterOp>(
  field: string,
  op: Op,
  ...value: OpValue<Op> extends undefined ? [] : [OpValue<Op>]
): CondFor<Op> {
  const v = value[0];
  const node =
    v === undefined
      ? { kind: 'cond', field, op }
      : { kind: 'cond', field, op, value: Array.isArray(v) ? Object.freeze([...v]) : v };
  // The overload signature above is what makes this sound; TS cannot relate the
  // conditional parameter type to the conditional return type by itself.
  return Object.freeze(node) as unknown as CondFor<Op>;
}

export function text(value: string, phrase = false): TextNode {
  return Object.freeze(phrase ? { kind: 'text', value, phrase: true } : { kind: 'text', value });
}

/** Conjunction, flattened; `true` items drop out; no items means `true`. */
export function and(...items: readonly FilterNode[]): FilterNode {
  const flat: FilterNode[] = [];
  for (const item of items) {
    if (item.kind === 'and') flat.push(...item.items);
    else if (item.kind !== 'true') flat.push(item);
  }
  if (flat.length === 0) return TRUE;
  if (flat.length === 1) return flat[0]!;
  return Object.freeze({ kind: 'and', items: Object.freeze(flat) });
}

/**
 * Disjunction, flattened; any `true` item makes it `true`. At least one item, because
 * an empty disjunction would be "match nothing", which the AST does not need to express.
 */
export function or(first: FilterNode, ...rest: readonly FilterNode[]): FilterNode {
  const flat: FilterNode[] = [];
  for (const item of [first, ...rest]) {
    if (item.kind === 'true') return TRUE;
    if (item.kind === 'or') flat.push(...item.items);
    else flat.push(item);
  }
  if (flat.length === 1) return flat[0]!;
  return Object.freeze({ kind: 'or', items: Object.freeze(flat) });
}

/**
 * Negation. Conditions are two-valued (never unknown, see filter/evaluate.ts), so
 * double negation cancels and `not eq` is `ne`.
 */
export function not(item: FilterNode): FilterNode {
  if (item.kind === 'not') return item.item;
  if (item.kind === 'cond' && isNegatable(item.op)) {
    const op = NEGATED_OP[item.op];
    return Object.freeze({ ...item, op }) as CondNode;
  }
  return Object.freeze({ kind: 'not', item });
}

/** Rebuilds a tree (possibly made by hand) in the normal form the constructors keep. */
export function simplify(node: FilterNode): FilterNode {
  switch (node.kind) {
    case 'and':
      return and(...node.items.map(simplify));
    case 'or': {
      const [first, ...rest] = node.items.map(simplify);
      return first === undefined ? node : or(first, ...rest);
    }
    case 'not':
      return not(simplify(node.item));
    case 'cond': {
      if (Object.isFrozen(node) && (!('value' in node) || Object.isFrozen(node.value))) return node;
      const value = 'value' in node && Array.isArray(node.value) ? Object.freeze([...node.value]) : undefined;
      return Object.freeze(value === undefined ? { ...node } : { ...node, value }) as CondNode;
    }
    case 'text':
      return text(node.value, node.phrase ?? false);
    case 'true':
      return TRUE;
    default:
      return node satisfies never;
  }
}

/** Depth (nodes on the longest root path) and size, checked against FILTER_LIMITS. */
export function measure(node: FilterNode): { depth: number; nodes: number } {
  switch (node.kind) {
    case 'and':
    case 'or': {
      let depth = 0;
      let nodes = 1;
      for (const item of node.items) {
        const m = measure(item);
        depth = Math.max(depth, m.depth);
        nodes += m.nodes;
      }
      return { depth: depth + 1, nodes };
    }
    case 'not': {
      const m = measure(node.item);
      return { depth: m.depth + 1, nodes: m.nodes + 1 };
    }
    case 'cond':
      return { depth: 1, nodes: node.op === 'in' || node.op === 'not_in' ? node.value.length : 1 };
    case 'text':
    case 'true':
      return { depth: 1, nodes: 1 };
    default:
      return node satisfies never;
  }
}

// ---------------------------------------------------------------------------------------
// explain: renders the query language, so that what a log line or an error message shows
// can be pasted back into a search box and means the same (tests check that property).

const KEYWORDS = new Set(['AND', 'OR', 'NOT', 'TO']);
const PLAIN_WORD = /^[\p{L}\p{N}_.@][\p{L}\p{N}_.@-]*$/u;
const PLAIN_CHAR = /[\p{L}\p{N}_.@]/u;

const quote = (s: string): string => `"${s.replace(/[\\"]/g, '\\$&')}"`;

/** A literal inside a wildcard value: every character that could mean syntax is escaped. */
const escapeBare = (s: string): string =>
  Array.from(s, (ch) => (PLAIN_CHAR.test(ch) ? ch : `\\${ch}`)).join('');

/** Escapes the `/` that would end the literal; existing escapes stay as they are. */
function regexLiteral(pattern: string): string {
  let out = '/';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) {
      out += ch + pattern[i + 1];
      i++;
    } else out += ch === '/' ? '\\/' : ch;
  }
  return `${out}/`;
}

/** Numbers and booleans bare (unless a leading `-` would read as NOT), strings quoted. */
function renderScalar(v: Scalar, inGroup = false): string {
  if (typeof v === 'string') return quote(v);
  const s = String(v);
  return inGroup && s.startsWith('-') ? quote(s) : s;
}

const renderOrdered = (v: string | number): string => (typeof v === 'number' ? String(v) : quote(v));

/** RE2 syntax for `s` itself: every character with a meaning of its own escaped. */
const re2Literal = (s: string): string => s.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');

/**
 * `message:word` searches like a bare word (parse-query.ts), so the conditions whose
 * rendering would be a `message:` word or phrase are rendered as the equivalent anchored
 * regex instead; undefined for every other condition.
 */
function renderMessageCond(node: CondNode): string | undefined {
  if (node.field !== 'message') return undefined;
  const anchored = (values: readonly Scalar[]) => {
    const alternatives = values.map((v) => re2Literal(scalarToString(v)));
    return regexLiteral(
      alternatives.length === 1 ? `^${alternatives[0]}$` : `^(?:${alternatives.join('|')})$`,
    );
  };
  switch (node.op) {
    case 'eq':
      return `message:${anchored([node.value])}`;
    case 'ne':
      return `NOT message:${anchored([node.value])}`;
    case 'in':
      return `message:${anchored(node.value)}`;
    case 'not_in':
      return `NOT message:${anchored(node.value)}`;
    case 'startswith':
      return `message:${regexLiteral(`^${re2Literal(node.value)}`)}`;
    case 'endswith':
      return `message:${regexLiteral(`${re2Literal(node.value)}$`)}`;
    default:
      return undefined;
  }
}

function renderCond(node: CondNode): string {
  const f = node.field;
  const message = renderMessageCond(node);
  if (message !== undefined) return message;
  switch (node.op) {
    case 'eq':
      return `${f}:${renderScalar(node.value)}`;
    case 'ne':
      return `NOT ${f}:${renderScalar(node.value)}`;
    case 'in':
      return `${f}:(${node.value.map((v) => renderScalar(v, true)).join(' OR ')})`;
    case 'not_in':
      return `NOT ${f}:(${node.value.map((v) => renderScalar(v, true)).join(' OR ')})`;
    case 'contains':
      return `${f}:*${escapeBare(node.value)}*`;
    case 'not_contains':
      return `NOT ${f}:*${escapeBare(node.value)}*`;
    case 'startswith':
      return `${f}:${escapeBare(node.value)}*`;
    case 'endswith':
      return `${f}:*${escapeBare(node.value)}`;
    case 'regex':
      return `${f}:${regexLiteral(node.value)}`;
    case 'gt':
      return `${f}:>${renderOrdered(node.value)}`;
    case 'gte':
      return `${f}:>=${renderOrdered(node.value)}`;
    case 'lt':
      return `${f}:<${renderOrdered(node.value)}`;
    case 'lte':
      return `${f}:<=${renderOrdered(node.value)}`;
    case 'between':
      return `${f}:[${renderOrdered(node.value[0])} TO ${renderOrdered(node.value[1])}]`;
    case 'exists':
      return `_exists_:${f}`;
    case 'not_exists':
      return `NOT _exists_:${f}`;
    case 'cidr':
      return `${f}:${node.value}`;
    default:
      return node satisfies never;
  }
}

type Context = 'top' | 'and' | 'not';

function render(node: FilterNode, ctx: Context): string {
  switch (node.kind) {
    case 'or': {
      const s = node.items.map((i) => render(i, 'top')).join(' OR ');
      return ctx === 'top' ? s : `(${s})`;
    }
    case 'and': {
      const s = node.items.map((i) => render(i, 'and')).join(' AND ');
      return ctx === 'not' ? `(${s})` : s;
    }
    case 'not':
      return `NOT ${render(node.item, 'not')}`;
    case 'cond': {
      const s = renderCond(node);
      // A negated condition renders as NOT ...; under another NOT it needs parentheses.
      return ctx === 'not' && s.startsWith('NOT ') ? `(${s})` : s;
    }
    case 'text':
      // A word stays a word (escaped where needed, as `message:*"*` parses to one), so
      // rendering is stable; phrases, keywords and the empty text are quoted.
      if (node.phrase || node.value === '' || KEYWORDS.has(node.value)) return quote(node.value);
      return PLAIN_WORD.test(node.value) ? node.value : escapeBare(node.value);
    case 'true':
      return '*';
    default:
      return node satisfies never;
  }
}

/**
 * A readable rendering in the query language (Lucene-like), for logs and error
 * messages. Parsing it back gives a filter that matches the same events.
 */
export function explain(node: FilterNode): string {
  return render(node, 'top');
}

// ---------------------------------------------------------------------------------------
// Value coercions shared by every backend.

const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * A finite number from a number or a decimal numeric string (no hex, no Infinity, no
 * surrounding spaces); `undefined` otherwise, booleans included.
 */
export function parseNumeric(v: Scalar): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v !== 'string' || !NUMERIC.test(v)) return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * A time value as Unix milliseconds: a number or numeric string is Unix seconds (the
 * API's unit; fractions keep millisecond precision), any other string must be ISO 8601
 * (`2024-05-01`, `2024-05-01T10:00:00.123+02:00`; no offset means UTC), read as ingest
 * reads event times (core/time.ts).
 */
export function toTimeMs(v: Scalar): number | undefined {
  const seconds = parseNumeric(v);
  if (seconds !== undefined) return Math.round(seconds * 1000);
  if (typeof v !== 'string') return undefined;
  return parseIsoMs(v) ?? undefined;
}

export interface Cidr {
  readonly address: string;
  readonly prefix: number;
  readonly family: 4 | 6;
}

/** `10.0.0.0/8` or `2001:db8::/32`; the prefix is required and within the family's width. */
export function parseCidr(s: string): Cidr | undefined {
  const slash = s.lastIndexOf('/');
  if (slash <= 0) return undefined;
  const address = s.slice(0, slash);
  const prefixText = s.slice(slash + 1);
  const family = isIP(address);
  if ((family !== 4 && family !== 6) || !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > (family === 4 ? 32 : 128)) return undefined;
  return { address, prefix, family };
}

/** The text a scalar stands for when compared with a string field (`true`, `42`, `1.5`). */
export const scalarToString = (v: Scalar): string => String(v);

// ---------------------------------------------------------------------------------------
// Severity: a string column with an order of its own, lowered here to plain
// string conditions so that every backend (the evaluator, DuckDB, ClickHouse) gets the
// order without knowing about it.

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
