import type { StoredEvent } from '../core/event.js';
import { compareCodePoints } from '../filter/evaluate.js';
import { compileRegex } from '../filter/regex.js';
import { parseNumeric } from '../filter/values.js';
import {
  type Agg,
  type Cond,
  type Expr,
  type OrderKey,
  type Program,
  QUANTILES,
  type Stage,
  TIMECHART_SERIES,
} from './program.js';
import { timechartBuckets } from './timechart.js';

/** A value in a table: text, a number (times in Unix seconds) or nothing. */
export type Cell = string | number | null;

interface Row {
  readonly ev?: Readonly<StoredEvent>;
  readonly cols: Record<string, Cell>;
}

const TIME_COLUMNS = new Set(['ts', 'received_at', 'stored_at']);

function fieldOf(ev: Readonly<StoredEvent> | undefined, field: string): Cell {
  if (!ev) return null;
  if (Object.hasOwn(ev, field) && field !== 'fields') {
    const v = (ev as unknown as Record<string, unknown>)[field];
    if (v === null || v === undefined) return null;
    if (TIME_COLUMNS.has(field)) return (v as number) / 1000;
    return v as Cell;
  }
  return Object.hasOwn(ev.fields, field) ? String(ev.fields[field]) : null;
}

/**
 * A number as text: as JavaScript writes it (whole numbers below 10^21 as digits, `1e+21`
 * and beyond in exponent form, -0 as 0); the stores' SQL writes the same.
 */
export const numberText = (n: number) => String(n);

const re2s = new Map<string, ReturnType<typeof compileRegex>>();
function re2(pattern: string) {
  let r = re2s.get(pattern);
  if (!r) {
    r = compileRegex(pattern);
    re2s.set(pattern, r);
  }
  return r;
}

function value(e: Expr, row: Row): Cell {
  switch (e.k) {
    case 'num':
    case 'str':
      return e.v;
    case 'ref':
      return 'field' in e.ref ? fieldOf(row.ev, e.ref.field) : (row.cols[e.ref.col] ?? null);
    case 'tonum': {
      const v = value(e.e, row);
      if (v === null) return null;
      return typeof v === 'number' ? v : (parseNumeric(v) ?? null);
    }
    case 'totext': {
      const v = value(e.e, row);
      return v === null ? null : typeof v === 'number' ? numberText(v) : v;
    }
    case 'neg': {
      const v = value(e.e, row);
      return v === null ? null : -(v as number);
    }
    case 'arith': {
      const a = value(e.a, row) as number | null;
      const b = value(e.b, row) as number | null;
      if (a === null || b === null) return null;
      switch (e.op) {
        case '+':
          return a + b;
        case '-':
          return a - b;
        case '*':
          return a * b;
        case '/':
          return b === 0 ? null : a / b;
        default:
          return e.op satisfies never;
      }
    }
    case 'concat':
      return e.args.map((a) => value(a, row) ?? '').join('');
    case 'lower':
    case 'upper':
    case 'len': {
      const v = value(e.e, row) as string | null;
      if (v === null) return null;
      return e.k === 'lower' ? v.toLowerCase() : e.k === 'upper' ? v.toUpperCase() : [...v].length;
    }
    case 'capture': {
      const v = value(e.e, row) as string | null;
      if (v === null) return null;
      const m = re2(e.regex).exec(v);
      return m ? (m[e.group] ?? '') : null;
    }
    default:
      return e satisfies never;
  }
}

function test(c: Cond, row: Row): boolean {
  switch (c.k) {
    case 'and':
      return c.items.every((i) => test(i, row));
    case 'or':
      return c.items.some((i) => test(i, row));
    case 'not':
      return !test(c.c, row);
    case 'cmp': {
      // A missing value matches no comparison.
      const v = value(c.e, row);
      if (v === null) return false;
      const d = typeof c.v === 'number' ? (v as number) - c.v : compareCodePoints(v as string, c.v);
      switch (c.op) {
        case '=':
          return d === 0;
        case '!=':
          return d !== 0;
        case '>':
          return d > 0;
        case '>=':
          return d >= 0;
        case '<':
          return d < 0;
        case '<=':
          return d <= 0;
        default:
          return c.op satisfies never;
      }
    }
    default:
      return c satisfies never;
  }
}

/** Nulls last in either direction; text by code point; numbers as numbers. */
function compareCells(a: Cell, b: Cell): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  return compareCodePoints(String(a), String(b));
}

/** Text as `sort` orders it (resolve.ts `orderBy`): what reads as a number first, as that number. */
function compareNumbersFirst(a: Cell, b: Cell): number {
  const x = typeof a === 'string' ? (parseNumeric(a) ?? null) : a;
  const y = typeof b === 'string' ? (parseNumeric(b) ?? null) : b;
  return compareCells(x, y) || compareCells(a, b);
}

/** Compares two rows' values of `keys` (missing values last in either direction). */
function compareKeyValues(x: readonly Cell[], y: readonly Cell[], keys: readonly OrderKey[]): number {
  for (let i = 0; i < keys.length; i++) {
    const a = x[i] as Cell;
    const b = y[i] as Cell;
    const c = compareCells(a, b);
    if (c) return a === null || b === null || !keys[i]?.desc ? c : -c;
  }
  return 0;
}

function orderRows(rows: Row[], keys: readonly OrderKey[]): Row[] {
  const decorated = rows.map((r) => ({ r, k: keys.map((key) => value(key.e, r)) }));
  decorated.sort((x, y) => compareKeyValues(x.k, y.k, keys));
  return decorated.map((d) => d.r);
}

function quantile(values: number[], q: number): number | null {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  const pos = q * (s.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return (s[lo] as number) + (pos - lo) * ((s[hi] as number) - (s[lo] as number));
}

function aggregate(a: Agg, rows: readonly Row[]): Cell {
  if (a.op === 'count') return a.e ? rows.filter((r) => value(a.e as Expr, r) !== null).length : rows.length;
  const vals = rows.map((r) => value(a.e as Expr, r)).filter((v): v is string | number => v !== null);
  if (a.op === 'count_distinct') return new Set(vals).size;
  const nums = vals as number[];
  if (!nums.length) return null;
  switch (a.op) {
    case 'sum':
      return nums.reduce((s, v) => s + v, 0);
    case 'avg':
      return nums.reduce((s, v) => s + v, 0) / nums.length;
    case 'min':
      return Math.min(...nums);
    case 'max':
      return Math.max(...nums);
    default:
      return quantile(nums, QUANTILES[a.op] as number);
  }
}

/** Rows grouped by the values of `keys` (one group of all rows without keys). */
function groups(rows: readonly Row[], keys: readonly Expr[]): Array<{ key: Cell[]; rows: Row[] }> {
  // As in SQL, aggregating without keys makes one row, even of no rows.
  if (!keys.length) return [{ key: [], rows: [...rows] }];
  const out = new Map<string, { key: Cell[]; rows: Row[] }>();
  for (const r of rows) {
    const key = keys.map((k) => value(k, r));
    const id = JSON.stringify(key);
    let g = out.get(id);
    if (!g) {
      g = { key, rows: [] };
      out.set(id, g);
    }
    g.rows.push(r);
  }
  return [...out.values()];
}

/**
 * Runs a program over events in JavaScript: the reference the stores' SQL is held equal
 * to (test/event-store/pipes-property.test.ts), not a path queries take. `range` is the query's
 * time range (ms), which `timechart` divides.
 */
export function evaluatePipes(
  program: Program,
  events: readonly Readonly<StoredEvent>[],
  range: { fromMs: number; toMs: number },
): Cell[][] {
  let rows: Row[] = events.map((ev) => ({ ev, cols: {} }));
  let order: readonly OrderKey[] = [];
  for (const st of program.stages) {
    const next = stage(st, rows, order, range);
    rows = next.rows;
    order = next.order;
  }
  // A table carries no infinities (JSON has none): an overflowed number is missing, as the stores give it.
  return rows.map((r) =>
    program.columns.map((c) => {
      const v = value(c.e, r);
      return typeof v === 'number' && !Number.isFinite(v) ? null : v;
    }),
  );
}

function stage(
  st: Stage,
  rows: Row[],
  order: readonly OrderKey[],
  range: { fromMs: number; toMs: number },
): { rows: Row[]; order: readonly OrderKey[] } {
  switch (st.s) {
    case 'derive':
      return { rows: rows.map((r) => ({ ev: r.ev, cols: { ...r.cols, [st.id]: value(st.e, r) } })), order };
    case 'filter':
      return { rows: rows.filter((r) => test(st.cond, r)), order };
    case 'order':
      return { rows: orderRows(rows, st.keys), order: st.keys };
    case 'limit':
      return { rows: orderRows(rows, order).slice(0, st.n), order };
    case 'group':
      return {
        rows: groups(
          rows,
          st.keys.map((k) => k.e),
        ).map((g) => ({
          cols: Object.fromEntries([
            ...st.keys.map((k, i) => [k.id, g.key[i] ?? null]),
            ...st.aggs.map((a) => [a.id, aggregate(a, g.rows)]),
          ]),
        })),
        order,
      };
    case 'top': {
      const keys = [...(st.by ? [st.by.e] : []), st.key.e];
      const counted = groups(
        rows.filter((r) => value(st.key.e, r) !== null),
        keys,
      ).map((g) => ({
        cols: {
          ...(st.by ? { [st.by.id]: g.key[0] ?? null } : {}),
          [st.key.id]: g.key[keys.length - 1] ?? null,
          [st.countId]: g.rows.length,
        },
      }));
      const perGroup = new Map<string, number>();
      const tieBreak = (r: Row) => st.tieBreak.map((k) => value(k.e, r));
      const sorted = [...counted].sort(
        (a, b) =>
          (st.by ? compareCells(a.cols[st.by.id] ?? null, b.cols[st.by.id] ?? null) : 0) ||
          (b.cols[st.countId] as number) - (a.cols[st.countId] as number) ||
          compareKeyValues(tieBreak(a), tieBreak(b), st.tieBreak),
      );
      return {
        rows: sorted.filter((r) => {
          const g = st.by ? JSON.stringify(r.cols[st.by.id] ?? null) : '';
          const seen = perGroup.get(g) ?? 0;
          perGroup.set(g, seen + 1);
          return seen < st.n;
        }),
        order,
      };
    }
    case 'timechart': {
      const { fromMs, spanMs, count } = timechartBuckets(range, st.spanMs);
      const bucketOf = (r: Row) => {
        const ts = fieldOf(r.ev, 'ts') as number;
        return Math.floor(Math.round(ts * 1000) / spanMs) * spanMs;
      };
      let seriesOf: (r: Row) => Cell = () => null;
      if (st.by) {
        const by = st.by;
        const counts = groups(
          rows.filter((r) => value(by.e, r) !== null),
          [by.e],
        ).sort(
          (a, b) => b.rows.length - a.rows.length || compareNumbersFirst(a.key[0] ?? null, b.key[0] ?? null),
        );
        const top = new Set(counts.slice(0, TIMECHART_SERIES).map((g) => g.key[0]));
        seriesOf = (r) => {
          const v = value(by.e, r);
          return v !== null && top.has(v) ? v : 'other';
        };
      }
      const cells = new Map<string, { b: number; s: Cell; rows: Row[] }>();
      for (const r of rows) {
        const b = bucketOf(r);
        const s = seriesOf(r);
        const id = JSON.stringify([b, s]);
        let c = cells.get(id);
        if (!c) {
          c = { b, s, rows: [] };
          cells.set(id, c);
        }
        c.rows.push(r);
      }
      const series = st.by ? [...new Set([...cells.values()].map((c) => c.s))] : [null];
      const out: Row[] = [];
      for (const s of series)
        for (let i = 0; i < count; i++) {
          const b = fromMs + i * spanMs;
          const c = cells.get(JSON.stringify([b, s]));
          out.push({
            cols: {
              [st.timeId]: b / 1000,
              ...(st.by ? { [st.by.id]: s } : {}),
              ...Object.fromEntries(st.aggs.map((a) => [a.id, c ? (aggregate(a, c.rows) ?? 0) : 0])),
            },
          });
        }
      return { rows: out, order };
    }
    case 'patterns': {
      const having = rows.filter((r) => fieldOf(r.ev, 'pattern_id') !== null);
      const perId = groups(having, [{ k: 'ref', ref: { field: 'pattern_id' }, type: 'string' }]);
      const groupOf = new Map(st.groups?.ids.map((id, i) => [id, st.groups?.of[i] as string]));
      const rowsOf = new Map<string, Array<{ id: string; n: number }>>();
      for (const g of perId) {
        const id = String(g.key[0]);
        const key = groupOf.get(id) ?? id;
        rowsOf.set(key, [...(rowsOf.get(key) ?? []), { id, n: g.rows.length }]);
      }
      return {
        rows: [...rowsOf.values()].map((ids) => {
          const n = ids.reduce((s, i) => s + i.n, 0);
          const [top] = [...ids].sort((a, b) => b.n - a.n || compareCodePoints(a.id, b.id));
          return { cols: { [st.keyId]: top?.id ?? null, [st.countId]: n, [st.shareId]: n / having.length } };
        }),
        order,
      };
    }
    default:
      return st satisfies never;
  }
}
