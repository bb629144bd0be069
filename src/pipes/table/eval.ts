import type { PipeDef } from '../pipe-table.js';

export const evalPipe: PipeDef<'eval'> = {
  rowwise: true,
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
};
