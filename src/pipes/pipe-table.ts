/**
 * The pipes' front half, one entry a pipe (docs/query-language.md#pipes): how it is
 * written (for the message when one is not complete), how its arguments are read (its
 * rules of the grammar, which syntax/grammar.ts puts together), what is checked as they are
 * read, and how it resolves into the program's stages (resolve.ts calls each pipe's entry
 * in turn with one PipeScope).
 *
 * A new pipe's front half is its entry here and its arguments in PipeArgs; its name goes
 * in shared/pipe-names.ts too, where the web UI's completion reads it (the shared folder
 * imports nothing), and the table is typed by that list, so one without the other does not
 * compile. A pipe that needs a stage the program does not have yet adds it to program.ts
 * and to the evaluators (run.ts, event-store/sql/pipe-sql.ts).
 */
import { checkRegex } from '../filter/regex.js';
import { extractRegex, rexRegex } from './capture-regex.js';
import { PipeError } from './pipe-error.js';
import type {
  Agg,
  ColType,
  Cond,
  Expr,
  Name,
  OrderKey,
  ParsedAgg,
  ParsedCond,
  ParsedExpr,
  PIPE_NAMES,
  Stage,
} from './program.js';

export type PipeName = (typeof PIPE_NAMES)[number];

/** What each pipe's grammar reads: its arguments, names with where they were written. */
export interface PipeArgs {
  stats: { readonly aggs: readonly ParsedAgg[]; readonly by: readonly Name[] };
  top: { readonly n: number; readonly field: Name; readonly by?: Name };
  timechart: { readonly spanMs?: number; readonly aggs: readonly ParsedAgg[]; readonly by?: Name };
  patterns: { readonly n: number };
  fields: { readonly names: readonly Name[] };
  sort: { readonly keys: ReadonlyArray<{ readonly col: Name; readonly desc: boolean }> };
  limit: { readonly n: number };
  where: { readonly cond: ParsedCond };
  extract: { readonly pattern: string; readonly patternAt: number; readonly from?: Name };
  rex: { readonly regex: string; readonly regexAt: number; readonly from?: Name };
  rename: { readonly pairs: ReadonlyArray<readonly [Name, Name]> };
  eval: { readonly name: Name; readonly expr: ParsedExpr };
}

/** One pipe as the parser read it: its name, its arguments and its offset in the whole query. */
export type Pipe = { [N in PipeName]: { readonly p: N; readonly at: number } & PipeArgs[N] }[PipeName];

type PipeOf<N extends PipeName> = Extract<Pipe, { readonly p: N }>;

/** What a name means at some point of the pipes: a value with its type, or why it is gone. */
export type ColumnSymbol =
  | { readonly e: Expr; readonly type: ColType; readonly template?: true }
  | { readonly gone: string };

/**
 * What a pipe's entry resolves with (resolve.ts): the stages so far, the names in scope,
 * the columns shown and the rows' order, with the lookups and conversions every pipe uses.
 * A name is looked up where it was written, so a problem is a PipeError at its position.
 */
export interface PipeScope {
  readonly stages: Stage[];
  /** Until the first aggregation, a name not in `symbols` is an event field. */
  readonly events: boolean;
  symbols: Map<string, ColumnSymbol>;
  visible: string[];
  order: OrderKey[];
  /** A sort or a limit: the order or the cut depends on every row. */
  reordered: boolean;
  /** A fresh column id (`_c1`, …). */
  id(): string;
  lookup(n: Name): { e: Expr; type: ColType; template?: true };
  ref(n: Name): Expr;
  define(name: string, e: Expr, type: ColType, extra?: { template?: true }): void;
  /** A fresh relation of these columns (after an aggregation), in this order. */
  relation(cols: ReadonlyArray<{ name: string; id: string; type: ColType; template?: true }>): void;
  unique(names: readonly Name[]): void;
  typeOf(e: Expr): ColType;
  orderBy(e: Expr, desc: boolean): OrderKey[];
  text(e: Expr): Expr;
  expr(p: ParsedExpr): Expr;
  cond(c: ParsedCond): Cond;
  agg(a: ParsedAgg): { name: string; agg: Agg };
  needEvents(p: Pipe, what: string): void;
}

export interface PipeDef<N extends PipeName> {
  /** How it is written, for the message when one is not complete. */
  readonly usage: string;
  /**
   * Its rules of the grammar (Peggy). The first, `<Name>Pipe` (`TopPipe`), reads the pipe
   * from its name on and returns `h.pipe('<name>', <its PipeArgs>, location())`; the rules
   * every pipe shares (Col, Count, AggList, …) are grammar.ts's.
   */
  readonly grammar: string;
  /** What the grammar cannot check, as the pipe is read (a PipeError at its position). */
  readonly check?: (args: PipeArgs[N]) => void;
  /** Its stages and columns, given those of the pipes before it. */
  readonly resolve: (pipe: PipeOf<N>, scope: PipeScope) => void;
}

/** The rule of the grammar that reads a pipe: `TopPipe` for `top`. */
export const pipeRule = (name: PipeName) => `${name[0]?.toUpperCase()}${name.slice(1)}Pipe`;

/** A pipe the grammar read (`h.pipe`): checked, with its name and offset. */
export function readPipe<N extends PipeName>(name: N, args: PipeArgs[N], at: number): Pipe {
  PIPE_TABLE[name].check?.(args);
  // The name and the arguments belong together by construction: TypeScript cannot see it.
  return { p: name, ...args, at } as Pipe;
}

/** The captures of `extract` and `rex`: each named group a text column. */
function captures(
  { regex, names }: { regex: string; names: Array<string | null> },
  p: PipeOf<'extract' | 'rex'>,
  scope: PipeScope,
): void {
  const source = scope.text(scope.ref(p.from ?? { name: 'message', at: p.at }));
  names.forEach((name, i) => {
    if (name === null) return;
    const id = scope.id();
    scope.stages.push({
      s: 'derive',
      id,
      e: { k: 'capture', e: source, regex, group: i + 1, groups: names.length },
    });
    scope.define(name, { k: 'ref', ref: { col: id }, type: 'string' }, 'string');
  });
}

export const PIPE_TABLE: { readonly [N in PipeName]: PipeDef<N> } = {
  stats: {
    usage: 'stats <aggregate>(field) [as name], … [by field, …], e.g. stats count() by host',
    grammar: `
StatsPipe
  = "stats" !IdentChar _ aggs:AggList by:(__ "by" __ @ColList)?
    { return h.pipe('stats', { aggs: aggs, by: by ?? [] }, location()); }`,
    resolve(p, scope) {
      const keys = p.by.map((n) => ({ name: n.name, key: { id: scope.id(), e: scope.ref(n) } }));
      const aggs = p.aggs.map((a) => scope.agg(a));
      scope.unique([...p.by, ...aggs.map((a, i) => ({ name: a.name, at: p.aggs[i]?.at ?? p.at }))]);
      scope.stages.push({ s: 'group', keys: keys.map((k) => k.key), aggs: aggs.map((a) => a.agg) });
      scope.relation([
        ...keys.map((k) => ({ name: k.name, id: k.key.id, type: scope.typeOf(k.key.e) })),
        ...aggs.map((a) => ({ name: a.name, id: a.agg.id, type: 'number' as const })),
      ]);
      scope.order = keys.flatMap((k) => scope.orderBy(scope.ref({ name: k.name, at: p.at }), false));
    },
  },
  top: {
    usage: 'top [N] field [by field], e.g. top 5 host',
    grammar: `
TopPipe
  = "top" !IdentChar n:(__ @Count)? __ f:Col by:(__ "by" __ @Col)?
    { return h.pipe('top', { n: n ?? 10, field: f, ...(by ? { by: by } : {}) }, location()); }`,
    resolve(p, scope) {
      const by = p.by ? { name: p.by.name, key: { id: scope.id(), e: scope.ref(p.by) } } : undefined;
      const key = { id: scope.id(), e: scope.ref(p.field) };
      const countId = scope.id();
      scope.unique([...(p.by ? [p.by] : []), p.field, { name: 'count', at: p.field.at }]);
      const keyType = scope.typeOf(key.e);
      const tieBreak = scope.orderBy({ k: 'ref', ref: { col: key.id }, type: keyType }, false);
      scope.stages.push({ s: 'top', n: p.n, key, countId, tieBreak, ...(by ? { by: by.key } : {}) });
      scope.relation([
        ...(by ? [{ name: by.name, id: by.key.id, type: scope.typeOf(by.key.e) }] : []),
        { name: p.field.name, id: key.id, type: keyType },
        { name: 'count', id: countId, type: 'number' },
      ]);
      const r = (name: string) => scope.ref({ name, at: p.at });
      scope.order = [
        ...(by ? scope.orderBy(r(by.name), false) : []),
        { e: r('count'), desc: true },
        ...scope.orderBy(r(p.field.name), false),
      ];
    },
  },
  timechart: {
    usage: 'timechart [span=5m] <aggregate>(field), … [by field], e.g. timechart count()',
    grammar: `
TimechartPipe
  = "timechart" !IdentChar span:(__ "span" _ "=" _ @Span)? _ aggs:AggList by:(__ "by" __ @Col)?
    { return h.pipe('timechart', { aggs: aggs, ...(span !== null ? { spanMs: span } : {}), ...(by ? { by: by } : {}) }, location()); }`,
    resolve(p, scope) {
      scope.needEvents(p, 'timechart');
      const by = p.by
        ? { name: p.by.name, key: { id: scope.id(), e: scope.text(scope.ref(p.by)) } }
        : undefined;
      const aggs = p.aggs.map((a) => scope.agg(a));
      const timeId = scope.id();
      scope.unique([
        { name: '_time', at: p.at },
        ...(p.by ? [p.by] : []),
        ...aggs.map((a, i) => ({ name: a.name, at: p.aggs[i]?.at ?? p.at })),
      ]);
      scope.stages.push({
        s: 'timechart',
        timeId,
        aggs: aggs.map((a) => a.agg),
        ...(p.spanMs !== undefined ? { spanMs: p.spanMs } : {}),
        ...(by ? { by: by.key } : {}),
      });
      scope.relation([
        { name: '_time', id: timeId, type: 'time' },
        ...(by ? [{ name: by.name, id: by.key.id, type: 'string' as const }] : []),
        ...aggs.map((a) => ({ name: a.name, id: a.agg.id, type: 'number' as const })),
      ]);
      scope.order = [
        { e: scope.ref({ name: '_time', at: p.at }), desc: false },
        ...(by ? [{ e: scope.ref({ name: by.name, at: p.at }), desc: false }] : []),
      ];
    },
  },
  patterns: {
    usage: 'patterns [N]',
    grammar: `
PatternsPipe
  = "patterns" !IdentChar n:(__ @Count)?
    { return h.pipe('patterns', { n: n ?? 50 }, location()); }`,
    resolve(p, scope) {
      scope.needEvents(p, 'patterns');
      const keyId = scope.id();
      const countId = scope.id();
      const shareId = scope.id();
      scope.stages.push({ s: 'patterns', keyId, countId, shareId });
      scope.relation([
        { name: 'pattern_id', id: keyId, type: 'string' },
        { name: 'template', id: keyId, type: 'string', template: true },
        { name: 'count', id: countId, type: 'number' },
        { name: 'share', id: shareId, type: 'number' },
      ]);
      const r = (name: string) => scope.ref({ name, at: p.at });
      scope.order = [
        { e: r('count'), desc: true },
        { e: r('pattern_id'), desc: false },
      ];
      scope.stages.push({ s: 'order', keys: scope.order }, { s: 'limit', n: p.n });
    },
  },
  fields: {
    usage: 'fields name, …',
    grammar: `
FieldsPipe
  = "fields" !IdentChar __ names:ColList
    { return h.pipe('fields', { names: names }, location()); }`,
    resolve(p, scope) {
      scope.unique(p.names);
      for (const n of p.names) scope.lookup(n);
      if (!scope.events) {
        const keep = new Set(p.names.map((n) => n.name));
        for (const k of scope.symbols.keys())
          if (!keep.has(k)) scope.symbols.set(k, { gone: 'fields left it out' });
      }
      scope.visible = p.names.map((n) => n.name);
    },
  },
  sort: {
    usage: 'sort [-]name, …',
    grammar: `
SortPipe
  = "sort" !IdentChar __ head:SortKey tail:(_ "," _ @SortKey)*
    { return h.pipe('sort', { keys: [head, ...tail] }, location()); }

SortKey
  = d:"-"? c:Col { return { col: c, desc: d !== null }; }`,
    resolve(p, scope) {
      scope.reordered = true;
      const keys = p.keys.flatMap((k) => scope.orderBy(scope.ref(k.col), k.desc));
      scope.order = [...keys, ...scope.order];
      scope.stages.push({ s: 'order', keys: scope.order });
    },
  },
  limit: {
    usage: 'limit N (1 to 10,000)',
    grammar: `
LimitPipe
  = "limit" !IdentChar __ n:Count
    { return h.pipe('limit', { n: n }, location()); }`,
    resolve(p, scope) {
      scope.reordered = true;
      scope.stages.push({ s: 'order', keys: scope.order }, { s: 'limit', n: p.n });
    },
  },
  where: {
    usage: 'where <column> <op> <number or "text">, with AND, OR, NOT and parentheses',
    grammar: `
WherePipe
  = "where" !IdentChar __ c:WOr
    { return h.pipe('where', { cond: c }, location()); }

WOr
  = head:WAnd tail:(_ OrOp _ @WAnd)* { return h.conds('or', head, tail, location()); }

WAnd
  = head:WNot tail:(_ AndOp _ @WNot)* { return h.conds('and', head, tail, location()); }

WNot
  = ops:(NotOp _)* c:WPrim { return h.not(ops.length, c, location()); }

WPrim
  = "(" _ c:WOr _ ")" { return c; }
  / c:Col _ op:CmpOp _ v:CmpValue { return { k: 'cmp', col: c, op: op, v: v }; }

CmpOp "comparison (=, !=, >, >=, <, <=)"
  = "!=" / ">=" / "<=" / "=" / ">" / "<"

CmpValue "a number or a quoted string"
  = Quoted
  / n:Number { return n; }`,
    resolve(p, scope) {
      scope.stages.push({ s: 'filter', cond: scope.cond(p.cond) });
    },
  },
  extract: {
    usage: 'extract "text with <name> holes" [from field]',
    grammar: `
ExtractPipe
  = "extract" !IdentChar __ s:QuotedAt from:(__ "from" __ @Col)?
    { return h.pipe('extract', { pattern: s.s, patternAt: s.at, ...(from ? { from: from } : {}) }, location()); }

QuotedAt
  = s:Quoted { return { s: s, at: location().start.offset }; }`,
    resolve: (p, scope) => captures(extractRegex(p.pattern, p.patternAt), p, scope),
  },
  rex: {
    usage: 'rex "RE2 with (?P<name>…) groups" [from field]',
    grammar: String.raw`
RexPipe
  = "rex" !IdentChar __ s:RawQuotedAt from:(__ "from" __ @Col)?
    { return h.pipe('rex', { regex: s.s, regexAt: s.at, ...(from ? { from: from } : {}) }, location()); }

// A regex in quotes reaches RE2 as written (\d, \., \\); only \" is a quote.
RawQuotedAt
  = '"' cs:RawChar* '"' { return { s: cs.join(''), at: location().start.offset + 1 }; }

RawChar
  = '\\"' { return '"'; }
  / "\\" c:AnyChar { return '\\' + c; }
  / [^"\\]`,
    check(args) {
      const problem = checkRegex(args.regex);
      if (problem !== undefined) throw new PipeError(`invalid regex: ${problem}`, args.regexAt);
    },
    resolve: (p, scope) => captures(rexRegex(p.regex, p.regexAt), p, scope),
  },
  rename: {
    usage: 'rename a as b, …',
    grammar: `
RenamePipe
  = "rename" !IdentChar __ head:RenamePair tail:(_ "," _ @RenamePair)*
    { return h.pipe('rename', { pairs: [head, ...tail] }, location()); }

RenamePair
  = a:Col __ "as" __ b:Col { return [a, b]; }`,
    resolve(p, scope) {
      for (const [from, to] of p.pairs) {
        const sym = scope.lookup(from);
        if (from.name === to.name) continue;
        scope.symbols.set(from.name, { gone: `it was renamed to "${to.name}"` });
        scope.symbols.set(to.name, sym);
        // The new name takes the old one's place among the columns shown (an older
        // column of that name goes); a field not shown yet joins at the end.
        const shown = scope.visible.filter((v) => v !== to.name);
        const at = shown.indexOf(from.name);
        if (at >= 0) shown[at] = to.name;
        else shown.push(to.name);
        scope.visible = shown;
      }
    },
  },
  eval: {
    usage: 'eval name = <expression>, e.g. eval kb = bytes / 1024',
    grammar: String.raw`
EvalPipe
  = "eval" !IdentChar __ n:Col _ "=" _ e:Expr
    { return h.pipe('eval', { name: n, expr: e }, location()); }

// Spaces around "-" in an expression: "a-b" is the field a-b.
Expr
  = head:Term tail:(_ @[+\-] _ @Term)* { return h.arith(head, tail, location()); }

Term
  = head:Factor tail:(_ @[*/] _ @Factor)* { return h.arith(head, tail, location()); }

Factor
  = ops:("-" _)* e:Operand { return h.neg(ops.length, e, location()); }

Operand
  = "(" _ e:Expr _ ")" { return e; }
  / n:Number !ColChar { return { k: 'num', v: n }; }
  / s:Quoted { return { k: 'str', v: s }; }
  / fn:Ident _ "(" _ args:ArgList? _ ")" { return h.fn(fn, args ?? [], location()); }
  / c:Col { return { k: 'col', col: c }; }

ArgList
  = head:Expr tail:(_ "," _ @Expr)* { return [head, ...tail]; }`,
    resolve(p, scope) {
      const e = scope.expr(p.expr);
      const id = scope.id();
      const type = scope.typeOf(e);
      scope.stages.push({ s: 'derive', id, e });
      scope.define(p.name.name, { k: 'ref', ref: { col: id }, type }, type);
    },
  },
};
