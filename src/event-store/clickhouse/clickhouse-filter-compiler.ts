/**
 * The filter compiler's ClickHouse dialect (sql/filter-compiler.ts owns the rules). It
 * runs on every server from 18.16 (Debian's) on, so it uses only what 18.16 has:
 * - values: no bound parameters on 18.16, so every value is written by the one audited
 *   literal function (`clickHouseBind` below, over `clickHouseLiteral`); times are the
 *   table's Int64 Unix milliseconds;
 * - map fields: the `fields` Nested column's two arrays, NULL when the key is absent;
 * - numbers in text: `toFloat64OrNull`, which refuses a leading `+` that `parseNumeric`
 *   reads, so the sign is dropped first. Known difference: it reads subnormal numbers
 *   (below 2.2e-308, e.g. "5e-324") as 0;
 * - regular expressions: `match` is RE2, but with `.` matching a line break; every
 *   pattern is wrapped in `(?-s:…)` so it means what it means in DuckDB and the
 *   evaluator. The group also keeps 18.16's pattern analysis (which looks for a literal
 *   every match must hold) from reading a leading `(?i)` as text: unwrapped,
 *   `match('REFUSED', '(?i)refused')` is 0 there;
 * - contains: ClickHouse's `lowerUTF8` is not `toLowerCase()` (it leaves characters
 *   whose lower case has another UTF-8 length). An ASCII needle without `i` or `k` is
 *   `positionCaseInsensitive` (exact: only ASCII letters lower to those ASCII letters).
 *   Any other needle becomes a regular expression of, for each of its characters, every
 *   character JavaScript lowers to it (computed from JavaScript's own tables: `İ` for the
 *   `i` of "i̇", the Kelvin sign for `k`). Known difference: capital sigma lowers to `σ` or
 *   (at a word's end) `ς`, which a regular expression without look-around cannot decide;
 *   here `Σ` matches both;
 * - cidr on text with a colon: Node's `isIPv6` grammar as a regular expression, then the
 *   address's 16 bytes (`IPv6StringToNum`, zone id dropped) compared with the block,
 *   IPv4 blocks as their IPv4-mapped IPv6 form, as `BlockList` matches them.
 */
import type { Cidr } from '../../filter/ast.js';
import { ipv4ToInt, ipv6ToBigInt } from '../sql/cidr-sql.js';
import { createFilterCompiler, type FilterDialect } from '../sql/filter-compiler.js';
import { isSqlTime, type SqlValue } from '../sql/sql-params.js';
import { clickHouseLiteral } from './clickhouse-literal.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * A value written into ClickHouse SQL (the `SqlParams` placeholder of this store): times
 * as Int64 ms (beyond Int64, its bounds), everything else through `clickHouseLiteral`.
 */
export function clickHouseBind(value: SqlValue): string {
  if (!isSqlTime(value)) return clickHouseLiteral(value);
  const ms = value.time;
  if (ms === Number.POSITIVE_INFINITY) return clickHouseLiteral(INT64_MAX);
  if (ms === Number.NEGATIVE_INFINITY) return clickHouseLiteral(INT64_MIN);
  return clickHouseLiteral(Math.round(ms));
}

// ---------------------------------------------------------------------------------------
// contains

/** Code point → the other code points JavaScript's `toLowerCase()` turns into it. */
let lowerPreimages: Map<number, number[]> | undefined;

function preimages(cp: number): readonly number[] {
  if (!lowerPreimages) {
    lowerPreimages = new Map();
    for (let u = 0; u <= 0x10ffff; u++) {
      if (u >= 0xd800 && u <= 0xdfff) continue;
      const lower = String.fromCodePoint(u).toLowerCase();
      const l = lower.codePointAt(0) as number;
      if (l === u || lower.length !== String.fromCodePoint(l).length) continue;
      const list = lowerPreimages.get(l);
      if (list) list.push(u);
      else lowerPreimages.set(l, [u]);
    }
  }
  return lowerPreimages.get(cp) ?? [];
}

const SIGMA = 0x3a3;
const DOTTED_CAPITAL_I = 0x130; // toLowerCase(): "i" + U+0307
const COMBINING_DOT = 0x307;
const re2Char = (cp: number) => `\\x{${cp.toString(16)}}`;
const re2Class = (cps: readonly number[]) =>
  cps.length === 1 ? re2Char(cps[0] as number) : `[${cps.map(re2Char).join('')}]`;

/** An RE2 pattern matching exactly the texts whose `toLowerCase()` holds `needle` (but Σ, above). */
export function loweredNeedlePattern(needle: string): string {
  const cps = [...needle].map((c) => c.codePointAt(0) as number);
  const parts: string[] = [];
  for (let j = 0; j < cps.length; j++) {
    const cp = cps[j] as number;
    const next = cps[j + 1];
    if (cp === 0x69 && next === COMBINING_DOT) {
      parts.push(`(?:${re2Class([0x69, 0x49])}${re2Char(COMBINING_DOT)}|${re2Char(DOTTED_CAPITAL_I)})`);
      j++;
      continue;
    }
    const alternatives = [cp, ...preimages(cp)];
    // İ lowers to "i̇": its "i" ends a needle, its dot starts one.
    if ((cp === 0x69 && next === undefined) || (cp === COMBINING_DOT && j === 0))
      alternatives.push(DOTTED_CAPITAL_I);
    if (cp === 0x3c2 && !alternatives.includes(SIGMA)) alternatives.push(SIGMA);
    parts.push(re2Class(alternatives));
  }
  return parts.join('');
}

// ---------------------------------------------------------------------------------------
// cidr

/** Node's `isIPv6` grammar (zone id included), as RE2. */
const V4_SEG = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])';
const V4 = `(?:${V4_SEG}\\.){3}${V4_SEG}`;
const V6_SEG = '(?:[0-9a-fA-F]{1,4})';
const IPV6_RE2 =
  '^(?:' +
  `(?:${V6_SEG}:){7}(?:${V6_SEG}|:)|` +
  `(?:${V6_SEG}:){6}(?:${V4}|:${V6_SEG}|:)|` +
  `(?:${V6_SEG}:){5}(?::${V4}|(?::${V6_SEG}){1,2}|:)|` +
  `(?:${V6_SEG}:){4}(?:(?::${V6_SEG}){0,1}:${V4}|(?::${V6_SEG}){1,3}|:)|` +
  `(?:${V6_SEG}:){3}(?:(?::${V6_SEG}){0,2}:${V4}|(?::${V6_SEG}){1,4}|:)|` +
  `(?:${V6_SEG}:){2}(?:(?::${V6_SEG}){0,3}:${V4}|(?::${V6_SEG}){1,5}|:)|` +
  `(?:${V6_SEG}:){1}(?:(?::${V6_SEG}){0,4}:${V4}|(?::${V6_SEG}){1,6}|:)|` +
  `(?::(?:(?::${V6_SEG}){0,5}:${V4}|(?::${V6_SEG}){1,7}|:))` +
  ')(?:%[0-9a-zA-Z-.:]{1,})?$';

/** The block as 128 bits and a prefix length: IPv4 blocks as their IPv4-mapped form. */
function block128(block: Cidr): { net: bigint; prefix: number } {
  if (block.family === 6) return { net: ipv6ToBigInt(block.address), prefix: block.prefix };
  return { net: (0xffffn << 32n) | ipv4ToInt(block.address), prefix: 96 + block.prefix };
}

// ---------------------------------------------------------------------------------------

export const clickHouseFilterDialect: FilterDialect = {
  true: '1',
  false: '0',
  standardNullLogic: false,
  // 18.16's `<=` and `>=` on text get a NUL wrong (`'a\0b' <= 'a'` is 1, as `'a\0b' > 'a'`
  // is): the negation of the strict test is right, NULL where the text is.
  textRelation: (x, op, v) =>
    op === '<=' ? `(NOT (${x} > ${v}))` : op === '>=' ? `(NOT (${x} < ${v}))` : `(${x} ${op} ${v})`,
  extraField(field, params) {
    const key = params.add(field);
    return `if(has("fields.key", ${key}), "fields.value"[indexOf("fields.key", ${key})], NULL)`;
  },
  integerText: (x) => `toString(${x})`,
  double: (p) => `toFloat64(${p})`,
  tryDouble: (x) => `toFloat64OrNull(if(startsWith(${x}, '+'), substring(${x}, 2), ${x}))`,
  isFinite: (x) => `isFinite(${x})`,
  fullMatch: (x, re) => `match(${x}, concat('(?-s:^(?:', ${re}, ')$)'))`,
  search: (x, re) => `match(${x}, concat('(?-s:', ${re}, ')'))`,
  startsWith: (x, p) => `startsWith(${x}, ${p})`,
  endsWith: (x, p) => `endsWith(${x}, ${p})`,
  contains: (x, p) => `(position(${x}, ${p}) > 0)`,
  containsLowered(s, needle, params) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is the point
    if (/^[\u0000-\u007f]*$/.test(needle) && !/[ik]/.test(needle))
      return `(positionCaseInsensitive(${s}, ${params.add(needle)}) > 0)`;
    return `match(${s}, ${params.add(loweredNeedlePattern(needle))})`;
  },
  ipv6InBlock(x, block, _blockText, params) {
    const { net, prefix } = block128(block);
    const bytes = net.toString(16).padStart(32, '0');
    const num = `IPv6StringToNum(splitByChar('%', assumeNotNull(${x}))[1])`;
    const whole = Math.floor(prefix / 8);
    const tests = [`match(${x}, ${params.add(IPV6_RE2)})`];
    if (whole > 0)
      tests.push(
        `substring(${num}, 1, ${params.add(whole)}) = unhex(${params.add(bytes.slice(0, whole * 2))})`,
      );
    const bits = prefix % 8;
    if (bits > 0) {
      const mask = (0xff << (8 - bits)) & 0xff;
      const value = Number.parseInt(bytes.slice(whole * 2, whole * 2 + 2), 16) & mask;
      tests.push(
        `bitAnd(reinterpretAsUInt8(substring(${num}, ${params.add(whole + 1)}, 1)), ${params.add(mask)}) = ${params.add(value)}`,
      );
    }
    return `(${tests.join(' AND ')})`;
  },
};

export const { compileFilter, numericTextSql } = createFilterCompiler(clickHouseFilterDialect);
