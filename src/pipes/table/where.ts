import type { PipeDef } from '../pipe-table.js';

export const wherePipe: PipeDef<'where'> = {
  rowwise: true,
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
};
