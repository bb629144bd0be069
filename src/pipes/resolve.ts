import { COLUMN_KINDS, type EventColumn, type FieldKind } from '../core/event.js';
import { checkFieldName } from '../filter/conditions.js';
import { rewriteGroups } from '../filter/regex.js';
import { parseNumeric } from '../filter/values.js';
import {
  type Agg,
  type ColType,
  type Cond,
  type Expr,
  MAX_TABLE_ROWS,
  type Name,
  type OrderKey,
  type OutputColumn,
  type ParsedAgg,
  type ParsedCond,
  type ParsedExpr,
  type Pipe,
  type Program,
  type Stage,
} from './program.js';

/** A problem in a pipe, at an offset of the whole query. */
export class PipeError extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(message);
  }
}

/** Columns a query without aggregating pipes shows unless `fields` says otherwise. */
export const DEFAULT_EVENT_COLUMNS = ['ts', 'host', 'app', 'severity', 'message'] as const;

const KIND_TYPE: Record<FieldKind, ColType> = { string: 'string', integer: 'number', time: 'time', ip: 'ip' };

const isNumeric = (t: ColType) => t === 'number' || t === 'time';

type Symbol =
  | { readonly e: Expr; readonly type: ColType; readonly template?: true }
  | { readonly gone: string };

/**
 * The program of a query's pipes: each name resolved to the event field or the column it
 * means at that point, each value's type known, every order total. Throws PipeError at
 * the position of the first problem, before anything runs.
 */
export function resolvePipes(pipes: readonly Pipe[]): Program {
  return new Resolver().run(pipes);
}

class Resolver {
  private stages: Stage[] = [];
  /** Until the first aggregation, a name not in `symbols` is an event field. */
  private events = true;
  private symbols = new Map<string, Symbol>();
  private visible: string[] = [...DEFAULT_EVENT_COLUMNS];
  private order: OrderKey[] = [];
  private next = 0;
  private aggregated = false;
  /** A sort or a limit: the order or the cut depends on every row. */
  private reordered = false;

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

  private id(): string {
    this.next++;
    return `_c${this.next}`;
  }

  private lookup(n: Name): { e: Expr; type: ColType; template?: true } {
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

  private ref(n: Name): Expr {
    const sym = this.lookup(n);
    if (sym.template)
      throw new PipeError(
        `"${n.name}" is filled in after the query runs; later pipes can use "pattern_id"`,
        n.at,
      );
    return sym.e;
  }

  private define(name: string, e: Expr, type: ColType, extra: { template?: true } = {}) {
    this.symbols.set(name, { e, type, ...extra });
    if (!this.visible.includes(name)) this.visible.push(name);
  }

  /** A fresh relation of these columns (after an aggregation), in this order. */
  private relation(cols: ReadonlyArray<{ name: string; id: string; type: ColType; template?: true }>) {
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

  private unique(names: readonly Name[]) {
    const seen = new Set<string>();
    for (const n of names) {
      if (seen.has(n.name)) throw new PipeError(`the column "${n.name}" is named twice`, n.at);
      seen.add(n.name);
    }
  }

  private typeOf(e: Expr): ColType {
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
  private orderBy(e: Expr, desc: boolean): OrderKey[] {
    if (this.typeOf(e) !== 'string') return [{ e, desc }];
    return [
      { e: { k: 'tonum', e }, desc },
      { e, desc },
    ];
  }

  private num(e: Expr): Expr {
    return isNumeric(this.typeOf(e)) ? e : { k: 'tonum', e };
  }

  private text(e: Expr): Expr {
    const t = this.typeOf(e);
    return t === 'string' || t === 'ip' ? e : { k: 'totext', e };
  }

  private expr(p: ParsedExpr): Expr {
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

  private cond(c: ParsedCond): Cond {
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

  private agg(a: ParsedAgg): { name: string; agg: Agg } {
    if (a.op !== 'count' && !a.field) throw new PipeError(`${a.op}() needs a field`, a.at);
    const name = a.as?.name ?? (a.field ? `${a.op}_${a.field.name}` : a.op);
    const id = this.id();
    if (!a.field) return { name, agg: { id, op: a.op } };
    const e = this.ref(a.field);
    const value = a.op === 'count' || a.op === 'count_distinct' ? e : this.num(e);
    return { name, agg: { id, op: a.op, e: value } };
  }

  private needEvents(p: Pipe, what: string) {
    if (!this.events)
      throw new PipeError(`${what} reads events: put it before stats, top, timechart or patterns`, p.at);
  }

  private pipe(p: Pipe): void {
    switch (p.p) {
      case 'where':
        this.stages.push({ s: 'filter', cond: this.cond(p.cond) });
        return;
      case 'eval': {
        const e = this.expr(p.expr);
        const id = this.id();
        const type = this.typeOf(e);
        this.stages.push({ s: 'derive', id, e });
        this.define(p.name.name, { k: 'ref', ref: { col: id }, type }, type);
        return;
      }
      case 'extract':
      case 'rex': {
        const { regex, names } =
          p.p === 'extract' ? extractRegex(p.pattern, p.patternAt) : rexRegex(p.regex, p.regexAt);
        const source = this.text(this.ref(p.from ?? { name: 'message', at: p.at }));
        names.forEach((name, i) => {
          if (name === null) return;
          const id = this.id();
          this.stages.push({
            s: 'derive',
            id,
            e: { k: 'capture', e: source, regex, group: i + 1, groups: names.length },
          });
          this.define(name, { k: 'ref', ref: { col: id }, type: 'string' }, 'string');
        });
        return;
      }
      case 'rename': {
        for (const [from, to] of p.pairs) {
          const sym = this.lookup(from);
          if (from.name === to.name) continue;
          this.symbols.set(from.name, { gone: `it was renamed to "${to.name}"` });
          this.symbols.set(to.name, sym);
          // The new name takes the old one's place among the columns shown (an older
          // column of that name goes); a field not shown yet joins at the end.
          const shown = this.visible.filter((v) => v !== to.name);
          const at = shown.indexOf(from.name);
          if (at >= 0) shown[at] = to.name;
          else shown.push(to.name);
          this.visible = shown;
        }
        return;
      }
      case 'fields': {
        this.unique(p.names);
        for (const n of p.names) this.lookup(n);
        if (!this.events) {
          const keep = new Set(p.names.map((n) => n.name));
          for (const k of this.symbols.keys())
            if (!keep.has(k)) this.symbols.set(k, { gone: 'fields left it out' });
        }
        this.visible = p.names.map((n) => n.name);
        return;
      }
      case 'sort': {
        this.reordered = true;
        const keys = p.keys.flatMap((k) => this.orderBy(this.ref(k.col), k.desc));
        this.order = [...keys, ...this.order];
        this.stages.push({ s: 'order', keys: this.order });
        return;
      }
      case 'limit':
        this.reordered = true;
        this.stages.push({ s: 'order', keys: this.order }, { s: 'limit', n: p.n });
        return;
      case 'stats': {
        const keys = p.by.map((n) => ({ name: n.name, key: { id: this.id(), e: this.ref(n) } }));
        const aggs = p.aggs.map((a) => this.agg(a));
        this.unique([...p.by, ...aggs.map((a, i) => ({ name: a.name, at: p.aggs[i]?.at ?? p.at }))]);
        this.stages.push({ s: 'group', keys: keys.map((k) => k.key), aggs: aggs.map((a) => a.agg) });
        this.relation([
          ...keys.map((k) => ({ name: k.name, id: k.key.id, type: this.typeOf(k.key.e) })),
          ...aggs.map((a) => ({ name: a.name, id: a.agg.id, type: 'number' as const })),
        ]);
        this.order = keys.flatMap((k) => this.orderBy(this.ref({ name: k.name, at: p.at }), false));
        return;
      }
      case 'top': {
        const by = p.by ? { name: p.by.name, key: { id: this.id(), e: this.ref(p.by) } } : undefined;
        const key = { id: this.id(), e: this.ref(p.field) };
        const countId = this.id();
        this.unique([...(p.by ? [p.by] : []), p.field, { name: 'count', at: p.field.at }]);
        const keyType = this.typeOf(key.e);
        const tieBreak = this.orderBy({ k: 'ref', ref: { col: key.id }, type: keyType }, false);
        this.stages.push({ s: 'top', n: p.n, key, countId, tieBreak, ...(by ? { by: by.key } : {}) });
        this.relation([
          ...(by ? [{ name: by.name, id: by.key.id, type: this.typeOf(by.key.e) }] : []),
          { name: p.field.name, id: key.id, type: keyType },
          { name: 'count', id: countId, type: 'number' },
        ]);
        const r = (name: string) => this.ref({ name, at: p.at });
        this.order = [
          ...(by ? this.orderBy(r(by.name), false) : []),
          { e: r('count'), desc: true },
          ...this.orderBy(r(p.field.name), false),
        ];
        return;
      }
      case 'timechart': {
        this.needEvents(p, 'timechart');
        const by = p.by
          ? { name: p.by.name, key: { id: this.id(), e: this.text(this.ref(p.by)) } }
          : undefined;
        const aggs = p.aggs.map((a) => this.agg(a));
        const timeId = this.id();
        this.unique([
          { name: '_time', at: p.at },
          ...(p.by ? [p.by] : []),
          ...aggs.map((a, i) => ({ name: a.name, at: p.aggs[i]?.at ?? p.at })),
        ]);
        this.stages.push({
          s: 'timechart',
          timeId,
          aggs: aggs.map((a) => a.agg),
          ...(p.spanMs !== undefined ? { spanMs: p.spanMs } : {}),
          ...(by ? { by: by.key } : {}),
        });
        this.relation([
          { name: '_time', id: timeId, type: 'time' },
          ...(by ? [{ name: by.name, id: by.key.id, type: 'string' as const }] : []),
          ...aggs.map((a) => ({ name: a.name, id: a.agg.id, type: 'number' as const })),
        ]);
        this.order = [
          { e: this.ref({ name: '_time', at: p.at }), desc: false },
          ...(by ? [{ e: this.ref({ name: by.name, at: p.at }), desc: false }] : []),
        ];
        return;
      }
      case 'patterns': {
        this.needEvents(p, 'patterns');
        const keyId = this.id();
        const countId = this.id();
        const shareId = this.id();
        this.stages.push({ s: 'patterns', keyId, countId, shareId });
        this.relation([
          { name: 'pattern_id', id: keyId, type: 'string' },
          { name: 'template', id: keyId, type: 'string', template: true },
          { name: 'count', id: countId, type: 'number' },
          { name: 'share', id: shareId, type: 'number' },
        ]);
        const r = (name: string) => this.ref({ name, at: p.at });
        this.order = [
          { e: r('count'), desc: true },
          { e: r('pattern_id'), desc: false },
        ];
        this.stages.push({ s: 'order', keys: this.order }, { s: 'limit', n: p.n });
        return;
      }
      default:
        p satisfies never;
    }
  }
}

const escapeRe2 = (s: string) => s.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');

/**
 * `extract "…<name>…"`: the literal text around the holes matched as it is, each hole
 * the shortest text up to what follows it (a last hole takes the rest), anywhere in the
 * value; `<_>` matches without making a column. Holes may span lines.
 */
export function extractRegex(pattern: string, at: number): { regex: string; names: Array<string | null> } {
  const names: Array<string | null> = [];
  let regex = '(?s)';
  let i = 0;
  const hole = /<([A-Za-z_][A-Za-z0-9_.@-]*)>/g;
  for (let m = hole.exec(pattern); m; m = hole.exec(pattern)) {
    regex += escapeRe2(pattern.slice(i, m.index));
    const last = m.index + m[0].length === pattern.length;
    regex += last ? '(.*)' : '(.*?)';
    const name = m[1] as string;
    if (name !== '_' && names.includes(name)) throw new PipeError(`the hole <${name}> appears twice`, at);
    names.push(name === '_' ? null : name);
    i = m.index + m[0].length;
  }
  regex += escapeRe2(pattern.slice(i));
  if (!names.some((n) => n !== null))
    throw new PipeError('an extract pattern needs at least one hole such as <name>', at);
  return { regex, names };
}

/**
 * `rex "…(?P<name>…)…"`: RE2 with named groups, each a column. Unnamed groups are made
 * non-capturing so that the capturing groups are exactly the named ones, in order.
 */
export function rexRegex(regex: string, at: number): { regex: string; names: Array<string | null> } {
  const names: string[] = [];
  const out = rewriteGroups(regex, (g) => {
    if (g.index === 0) return undefined;
    if (g.name === null) return '(?:';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(g.name))
      throw new PipeError(`the group name <${g.name}> may hold letters, digits and _ only`, at);
    if (names.includes(g.name)) throw new PipeError(`the group <${g.name}> appears twice`, at);
    names.push(g.name);
    return '(';
  });
  if (!names.length)
    throw new PipeError('a rex regex needs at least one named group such as (?P<name>…)', at);
  return { regex: out, names };
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
