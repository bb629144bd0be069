/**
 * The JavaScript evaluator of the filter AST, for events in memory (trigger matching,
 * live tails, tests). These are THE semantics of a filter; the SQL compilers (DuckDB,
 * ClickHouse) must reproduce them exactly, and must get every value coercion from the
 * helpers in filter/ast.ts rather than from the engine.
 *
 * Fields. A known column (core/event.ts) is read from its property and compares by the
 * column's kind; any other name is read from `fields` (own keys only) as a string.
 * A field is missing when absent, `null` or `undefined`; `""` is present.
 *
 * Two-valued logic. A condition is always true or false, never unknown. On a missing
 * field every operator is false except the negated ones (`ne`, `not_in`,
 * `not_contains`, `not_exists`), which are true: each negated operator is exactly NOT of
 * its positive one, in every case. (SQL: `COALESCE(<positive>, FALSE)`, then `NOT`; and
 * `NOT` of a group is plain boolean negation of two-valued children.)
 *
 * eq / ne / in / not_in:
 * - integer columns compare numerically; the value goes through `parseNumeric` (a number
 *   or a decimal numeric string); anything else (booleans too) never equals.
 * - time columns compare the stored Unix ms with `toTimeMs(value)` (Unix seconds, or an
 *   ISO 8601 string); an unparseable value never equals.
 * - string and ip columns and every other field: exact, case-sensitive string equality
 *   with `scalarToString(value)` (`42` → "42", `true` → "true").
 * gt / gte / lt / lte / between (both bounds inclusive):
 * - integer: numeric; time: Unix ms against `toTimeMs(value)`.
 * - string, ip and other fields: a number value (or numeric bounds) compares numerically
 *   with the field parsed by `parseNumeric` (a non-numeric field value is false); a
 *   string value compares by Unicode code point, which is UTF-8 byte order, i.e. DuckDB's
 *   and ClickHouse's binary string order (not JavaScript's UTF-16 code-unit order).
 * contains / not_contains and text nodes: case-insensitive substring; both sides are
 *   lower-cased (`toLowerCase`, SQL `lower()`), then a plain substring test (no
 *   wildcards, no tokenising). A text node is `contains` on `message`.
 * startswith / endswith: case-sensitive prefix / suffix.
 * regex: RE2 syntax, partial match (unanchored search), case-sensitive unless `(?i)`;
 *   evaluated by RE2 (re2js, regex.ts), so in linear time and as the stores do.
 * String operators (contains, startswith, endswith, regex) on integer columns work on the
 *   decimal text (`String(n)`, SQL `CAST(x AS VARCHAR)`); on time columns they are false
 *   (so their negations are true). Validation refuses the time case anyway.
 * severity: before anything else each condition goes through `lowerCond`
 *   (filter/ast.ts), which every backend applies: relations (gt ... between)
 *   compare by syslog rank, debug < info < notice < warning < error < critical < alert <
 *   emergency, as `in` the names that satisfy them; equality values that name a
 *   severity (`err`, `ERROR`, `3`) mean its canonical name. Sorting: filter/sort.ts.
 * cidr: the value must parse as an IPv4 or IPv6 address (else false) inside the block;
 *   an IPv4-mapped IPv6 address (`::ffff:10.1.2.3`) matches IPv4 blocks and vice versa.
 *   On integer and time columns: false.
 * exists: present. true: always. and / or / not: boolean.
 */
import { BlockList, isIP } from 'node:net';
import { COLUMN_KINDS, type EventColumn, type FieldKind } from '../core/event.js';
import {
  type CondNode,
  type FilterNode,
  lowerCond,
  parseCidr,
  parseNumeric,
  type Scalar,
  scalarToString,
  toTimeMs,
} from './ast.js';
import { fieldKind } from './conditions.js';
import { compileRegex, requiredLiteral } from './regex.js';

/** What the evaluator reads: event columns as properties, other fields in `fields`. */
export type EventLike = { readonly [C in EventColumn]?: string | number | null } & {
  readonly fields?: Readonly<Record<string, string>>;
};

export type Predicate = (event: EventLike) => boolean;

type Value = string | number;
type Matcher = (value: Value) => boolean;
type Reader = (event: EventLike) => Value | null | undefined;

/** A field's value as the stores group it: columns as they are (times in ms), extra fields as text. */
export function fieldValue(event: EventLike, field: string): Value | null | undefined {
  return reader(field)(event);
}

function reader(field: string): Reader {
  if (Object.hasOwn(COLUMN_KINDS, field)) {
    const column = field as EventColumn;
    return (e) => e[column];
  }
  // Own keys only: `fields.constructor` must not find Object.prototype.
  return (e) => (e.fields !== undefined && Object.hasOwn(e.fields, field) ? e.fields[field] : undefined);
}

const asNumber = (v: Value): number | undefined => (typeof v === 'number' ? v : parseNumeric(v));
const asTime = (v: Value): number | undefined => (typeof v === 'number' ? v : undefined);

/** Surrogates sort above U+E000..U+FFFF in code point order, below them in UTF-16 order. */
const codePointKey = (c: number): number => (c >= 0xd800 ? (c <= 0xdfff ? c + 0x2000 : c - 0x800) : c);

/** Compares by Unicode code point (UTF-8 byte order). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointKey(x) - codePointKey(y);
  }
  return a.length - b.length;
}

const never: Matcher = () => false;

/**
 * `s.toLowerCase()`, remembered for the last string: a trigger matcher runs every
 * trigger's text conditions on one event in a row, so the message is lowered once per
 * event rather than once per condition.
 */
let lastText = '';
let lastLower = '';
export function lower(s: string): string {
  if (s !== lastText) {
    lastText = s;
    lastLower = s.toLowerCase();
  }
  return lastLower;
}

function equality(kind: FieldKind, value: Scalar): Matcher {
  switch (kind) {
    case 'integer': {
      const target = parseNumeric(value);
      return target === undefined ? never : (v) => asNumber(v) === target;
    }
    case 'time': {
      const target = toTimeMs(value);
      return target === undefined ? never : (v) => asTime(v) === target;
    }
    case 'string':
    case 'ip': {
      const target = scalarToString(value);
      return (v) => String(v) === target;
    }
    default:
      return kind satisfies never;
  }
}

/** `v` compared with `value`: negative, zero, positive, or undefined when incomparable. */
function comparator(kind: FieldKind, value: string | number): (v: Value) => number | undefined {
  switch (kind) {
    case 'integer': {
      const target = parseNumeric(value);
      return (v) => {
        const n = asNumber(v);
        return n === undefined || target === undefined ? undefined : n - target;
      };
    }
    case 'time': {
      const target = toTimeMs(value);
      return (v) => {
        const t = asTime(v);
        return t === undefined || target === undefined ? undefined : t - target;
      };
    }
    case 'string':
    case 'ip':
      if (typeof value === 'number') {
        return (v) => {
          const n = asNumber(v);
          return n === undefined ? undefined : n - value;
        };
      }
      return (v) => compareCodePoints(String(v), value);
    default:
      return kind satisfies never;
  }
}

function ordered(kind: FieldKind, value: string | number, test: (c: number) => boolean): Matcher {
  const compare = comparator(kind, value);
  return (v) => {
    const c = compare(v);
    return c !== undefined && test(c);
  };
}

/** A test on the field's text; integer columns as decimal text, time columns never. */
function textual(kind: FieldKind, test: (s: string) => boolean): Matcher {
  switch (kind) {
    case 'time':
      return never;
    case 'integer':
    case 'string':
    case 'ip':
      return (v) => test(String(v));
    default:
      return kind satisfies never;
  }
}

/** A dotted-quad IPv4 address as an unsigned 32-bit number, or -1 when `s` is not one. */
function ipv4ToNumber(s: string): number {
  let n = 0;
  let part = -1;
  let dots = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (part < 0 || ++dots > 3) return -1;
      n = n * 256 + part;
      part = -1;
    } else if (c >= 48 && c <= 57) {
      // No leading zeros, as isIP refuses them.
      if (part === 0) return -1;
      part = part < 0 ? c - 48 : part * 10 + c - 48;
      if (part > 255) return -1;
    } else return -1;
  }
  return dots === 3 && part >= 0 ? n * 256 + part : -1;
}

function cidrMatcher(kind: FieldKind, value: string): Matcher {
  const block = parseCidr(value);
  if (block === undefined || kind === 'integer' || kind === 'time') return never;
  const list = new BlockList();
  list.addSubnet(block.address, block.prefix, block.family === 4 ? 'ipv4' : 'ipv6');
  // Dotted quads against an IPv4 block, the common case, compare as numbers; everything
  // else (IPv6, IPv4-mapped forms) goes through BlockList.
  const size = 2 ** (32 - block.prefix);
  const base = block.family === 4 ? Math.floor(ipv4ToNumber(block.address) / size) * size : -1;
  return (v) => {
    const s = String(v);
    if (base >= 0) {
      const n = ipv4ToNumber(s);
      if (n >= 0) return n >= base && n < base + size;
    }
    const family = isIP(s);
    if (family === 0) return false;
    try {
      return list.check(s, family === 4 ? 'ipv4' : 'ipv6');
    } catch {
      // isIP accepts a few forms (zone ids) that BlockList refuses: not in any block.
      return false;
    }
  };
}

/** Applies `match` to a present value; a missing field is false. */
const present =
  (read: Reader, match: Matcher): Predicate =>
  (e) => {
    const v = read(e);
    return v !== null && v !== undefined && match(v);
  };

const negate =
  (p: Predicate): Predicate =>
  (e) =>
    !p(e);

function compileCond(node: CondNode): Predicate {
  const lowered = lowerCond(node);
  if (lowered !== node) return compilePredicate(lowered);
  const read = reader(node.field);
  const kind = fieldKind(node.field);
  switch (node.op) {
    case 'exists':
      return (e) => read(e) != null;
    case 'not_exists':
      return (e) => read(e) == null;
    case 'eq':
      return present(read, equality(kind, node.value));
    case 'ne':
      return negate(present(read, equality(kind, node.value)));
    case 'in':
    case 'not_in': {
      const matchers = node.value.map((v) => equality(kind, v));
      const p = present(read, (v) => matchers.some((m) => m(v)));
      return node.op === 'in' ? p : negate(p);
    }
    case 'gt':
      return present(
        read,
        ordered(kind, node.value, (c) => c > 0),
      );
    case 'gte':
      return present(
        read,
        ordered(kind, node.value, (c) => c >= 0),
      );
    case 'lt':
      return present(
        read,
        ordered(kind, node.value, (c) => c < 0),
      );
    case 'lte':
      return present(
        read,
        ordered(kind, node.value, (c) => c <= 0),
      );
    case 'between': {
      const lo = ordered(kind, node.value[0], (c) => c >= 0);
      const hi = ordered(kind, node.value[1], (c) => c <= 0);
      return present(read, (v) => lo(v) && hi(v));
    }
    case 'contains':
    case 'not_contains': {
      const needle = node.value.toLowerCase();
      const p = present(
        read,
        textual(kind, (s) => lower(s).includes(needle)),
      );
      return node.op === 'contains' ? p : negate(p);
    }
    case 'startswith': {
      const prefix = node.value;
      return present(
        read,
        textual(kind, (s) => s.startsWith(prefix)),
      );
    }
    case 'endswith': {
      const suffix = node.value;
      return present(
        read,
        textual(kind, (s) => s.endsWith(suffix)),
      );
    }
    case 'regex': {
      let re: { test(s: string): boolean } | undefined;
      try {
        re = compileRegex(node.value);
      } catch {
        // Validation refuses such patterns; a hand-built AST with one matches nothing.
        re = undefined;
      }
      const compiled = re;
      // A literal every match contains rules most values out without calling RE2.
      const literal = requiredLiteral(node.value);
      return compiled === undefined
        ? () => false
        : present(
            read,
            textual(kind, literal ? (s) => s.includes(literal) && compiled.test(s) : (s) => compiled.test(s)),
          );
    }
    case 'cidr':
      return present(read, cidrMatcher(kind, node.value));
    default:
      return node satisfies never;
  }
}

/** Rough cost of evaluating a node once: children of and/or run cheapest first. */
function cost(node: FilterNode): number {
  switch (node.kind) {
    case 'true':
      return 0;
    case 'cond':
      return node.op === 'regex' ? 20 : node.op === 'cidr' ? 8 : node.op.includes('contains') ? 4 : 1;
    case 'text':
      return 4;
    case 'not':
      return cost(node.item);
    case 'and':
    case 'or':
      return node.items.reduce((s, i) => s + cost(i), 0);
    default:
      return node satisfies never;
  }
}

/** The same items, cheapest first: and/or are order-free, so only the speed changes. */
const byCost = (items: readonly FilterNode[]) =>
  items
    .map((item, i) => ({ item, i, c: cost(item) }))
    .sort((a, b) => a.c - b.c || a.i - b.i)
    .map((x) => x.item);

/**
 * Compiles a filter to a predicate over one event. Regexes and CIDR blocks are
 * prepared once here, so the predicate is cheap to call per event.
 */
export function compilePredicate(node: FilterNode): Predicate {
  switch (node.kind) {
    case 'true':
      return () => true;
    case 'and': {
      const items = byCost(node.items).map(compilePredicate);
      return (e) => items.every((p) => p(e));
    }
    case 'or': {
      const items = byCost(node.items).map(compilePredicate);
      return (e) => items.some((p) => p(e));
    }
    case 'not':
      return negate(compilePredicate(node.item));
    case 'text': {
      const needle = node.value.toLowerCase();
      return (e) => typeof e.message === 'string' && lower(e.message).includes(needle);
    }
    case 'cond':
      return compileCond(node);
    default:
      return node satisfies never;
  }
}
