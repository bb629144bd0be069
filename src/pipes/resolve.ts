/**
 * The program of a query's pipes: resolve.ts keeps what is in scope from one pipe to the
 * next (PipeScope) and calls each pipe's entry of the table (pipe-table.ts) in turn.
 */
import { COLUMN_KINDS, type EventColumn, type FieldKind } from '../core/event.js';
import { checkFieldName } from '../filter/conditions.js';
import { parseNumeric } from '../filter/values.js';
import { PipeError } from './pipe-error.js';
import { type ColumnSymbol, PIPE_TABLE, type Pipe, type PipeScope } from './pipe-table.js';
import type {
  Agg,
  ColType,
  Cond,
  Expr,
  Name,
  OrderKey,
  OutputColumn,
  ParsedAgg,
  ParsedCond,
  ParsedExpr,
  Program,
  Stage,
} from './program.js';

/** Columns a query without aggregating pipes shows unless `fields` says otherwise. */
export const DEFAULT_EVENT_COLUMNS = ['ts', 'host', 'app', 'severity', 'message'] as const;

const KIND_TYPE: Record<FieldKind, ColType> = { string: 'string', integer: 'number', time: 'time', ip: 'ip' };

const isNumeric = (t: ColType) => t === 'number' || t === 'time';

/**
 * The program of a query's pipes: each name resolved to the event field or the column it
 * means at that point, each value's type known, every order total. Throws PipeError at
 * the position of the first problem, before anything runs.
 */
export function resolvePipes(pipes: readonly Pipe[]): Program {
  return new Resolver().run(pipes);
}

class Resolver implements PipeScope {
  readonly stages: Stage[] = [];
  events = true;
  symbols = new Map<string, ColumnSymbol>();
  visible: string[] = [...DEFAULT_EVENT_COLUMNS];
  order: OrderKey[] = [];
  reordered = false;
  private next = 0;
  private aggregated = false;

  run(pipes: readonly Pipe[]): Program {
    this.order = [
      { e: this.ref({ name: 'ts', at: 0 }), desc: true },
      { e: this.ref({ name: 'ev_id', at: 0 }), desc: true },
    ];
    for (const p of pipes) this.pipe(p);
    const columns: OutputColumn[] = this.visible.map((name) => {
      const sym = this.lookup({ name, at: 0 });
      return { name, type: sym.type, e: sym.e, ...(sym.template ? { template: true as const } : {}) };
    });
    this.stages.push({ s: 'order', keys: this.order });
    return {
      stages: this.stages,
      columns,
      aggregates: this.aggregated,
      sliceable: !this.aggregated && !this.reordered,
    };
  }

  id(): string {
    this.next++;
    return `_c${this.next}`;
  }

  lookup(n: Name): { e: Expr; type: ColType; template?: true } {
    const sym = this.symbols.get(n.name);
    if (sym && 'gone' in sym) throw new PipeError(`there is no column "${n.name}" here (${sym.gone})`, n.at);
    if (sym) return sym;
    if (!this.events) {
      const have = [...this.symbols].filter(([, s]) => !('gone' in s)).map(([k]) => k);
      throw new PipeError(
        `there is no column "${n.name}" here; the columns are ${have.map((h) => `"${h}"`).join(', ')}`,
        n.at,
      );
    }
    const problem = checkFieldName(n.name);
    if (problem !== undefined) throw new PipeError(`field name ${problem}`, n.at);
    const kind = Object.hasOwn(COLUMN_KINDS, n.name) ? COLUMN_KINDS[n.name as EventColumn] : 'string';
    const type = KIND_TYPE[kind];
    return { e: { k: 'ref', ref: { field: n.name }, type }, type };
  }

  ref(n: Name): Expr {
    const sym = this.lookup(n);
    if (sym.template)
      throw new PipeError(
        `"${n.name}" is filled in after the query runs; later pipes can use "pattern_id"`,
        n.at,
      );
    return sym.e;
  }

  define(name: string, e: Expr, type: ColType, extra: { template?: true } = {}) {
    this.symbols.set(name, { e, type, ...extra });
    if (!this.visible.includes(name)) this.visible.push(name);
  }

  relation(cols: ReadonlyArray<{ name: string; id: string; type: ColType; template?: true }>) {
    this.events = false;
    this.aggregated = true;
    this.symbols = new Map();
    this.visible = [];
    for (const c of cols)
      this.define(
        c.name,
        { k: 'ref', ref: { col: c.id }, type: c.type },
        c.type,
        c.template ? { template: true } : {},
      );
  }

  unique(names: readonly Name[]) {
    const seen = new Set<string>();
    for (const n of names) {
      if (seen.has(n.name)) throw new PipeError(`the column "${n.name}" is named twice`, n.at);
      seen.add(n.name);
    }
  }

  typeOf(e: Expr): ColType {
    switch (e.k) {
      case 'num':
      case 'tonum':
      case 'neg':
      case 'arith':
      case 'len':
        return 'number';
      case 'ref':
        return e.type;
      default:
        return 'string';
    }
  }

  /**
   * The keys that order rows by `e`: text that reads as a number (`parseNumeric`: a JSON
   * number kept in `fields` as text, a count grouped by) sorts as that number, numbers
   * before the other text, which sorts by code point; missing values last in both
   * directions. The same order as a Search's sort of such a field (filter/sort.ts).
   */
  orderBy(e: Expr, desc: boolean): OrderKey[] {
    if (this.typeOf(e) !== 'string') return [{ e, desc }];
    return [
      { e: { k: 'tonum', e }, desc },
      { e, desc },
    ];
  }

  private num(e: Expr): Expr {
    return isNumeric(this.typeOf(e)) ? e : { k: 'tonum', e };
  }

  text(e: Expr): Expr {
    const t = this.typeOf(e);
    return t === 'string' || t === 'ip' ? e : { k: 'totext', e };
  }

  expr(p: ParsedExpr): Expr {
    switch (p.k) {
      case 'num':
      case 'str':
        return p;
      case 'col':
        return this.ref(p.col);
      case 'neg':
        return { k: 'neg', e: this.num(this.expr(p.e)) };
      case 'arith':
        return { k: 'arith', op: p.op, a: this.num(this.expr(p.a)), b: this.num(this.expr(p.b)) };
      case 'fn': {
        const args = p.args.map((a) => this.expr(a));
        if (p.fn === 'concat') {
          if (!args.length) throw new PipeError('concat() needs at least one argument', p.at);
          return { k: 'concat', args: args.map((a) => this.text(a)) };
        }
        const [only] = args;
        if (args.length !== 1 || !only) throw new PipeError(`${p.fn}() takes exactly one argument`, p.at);
        return { k: p.fn, e: this.text(only) };
      }
      default:
        return p satisfies never;
    }
  }

  cond(c: ParsedCond): Cond {
    switch (c.k) {
      case 'and':
      case 'or':
        return { k: c.k, items: c.items.map((i) => this.cond(i)) };
      case 'not':
        return { k: 'not', c: this.cond(c.c) };
      case 'cmp': {
        const e = this.ref(c.col);
        const t = this.typeOf(e);
        if (typeof c.v === 'number') return { k: 'cmp', e: this.num(e), op: c.op, v: c.v };
        if (!isNumeric(t)) return { k: 'cmp', e, op: c.op, v: c.v };
        const n = parseNumeric(c.v);
        if (n === undefined)
          throw new PipeError(`"${c.col.name}" holds numbers: compare it with a number`, c.col.at);
        return { k: 'cmp', e, op: c.op, v: n };
      }
      default:
        return c satisfies never;
    }
  }

  agg(a: ParsedAgg): { name: string; agg: Agg } {
    if (a.op !== 'count' && !a.field) throw new PipeError(`${a.op}() needs a field`, a.at);
    const name = a.as?.name ?? (a.field ? `${a.op}_${a.field.name}` : a.op);
    const id = this.id();
    if (!a.field) return { name, agg: { id, op: a.op } };
    const e = this.ref(a.field);
    const value = a.op === 'count' || a.op === 'count_distinct' ? e : this.num(e);
    return { name, agg: { id, op: a.op, e: value } };
  }

  needEvents(p: Pipe, what: string) {
    if (!this.events)
      throw new PipeError(`${what} reads events: put it before stats, top, timechart or patterns`, p.at);
  }

  private pipe(p: Pipe): void {
    // Each entry takes its own kind of pipe, which p.p names: TypeScript cannot tie the two.
    const def = PIPE_TABLE[p.p];
    (def.resolve as (pipe: Pipe, scope: PipeScope) => void)(p, this);
    if (!def.rowwise) this.reordered = true;
  }
}
