import type { PipeDef } from '../pipe-table.js';

export const sortPipe: PipeDef<'sort'> = {
  usage: 'sort [-]name, …',
  grammar: `
SortPipe
  = "sort" !IdentChar __ head:SortKey tail:(_ "," _ @SortKey)*
    { return h.pipe('sort', { keys: [head, ...tail] }, location()); }

SortKey
  = d:"-"? c:Col { return { col: c, desc: d !== null }; }`,
  resolve(p, scope) {
    const keys = p.keys.flatMap((k) => scope.orderBy(scope.ref(k.col), k.desc));
    scope.order = [...keys, ...scope.order];
    scope.stages.push({ s: 'order', keys: scope.order });
  },
};
