import type { PipeDef } from '../pipe-table.js';

export const limitPipe: PipeDef<'limit'> = {
  usage: 'limit N (1 to 10,000)',
  grammar: `
LimitPipe
  = "limit" !IdentChar __ n:Count
    { return h.pipe('limit', { n: n }, location()); }`,
  resolve(p, scope) {
    scope.stages.push({ s: 'order', keys: scope.order }, { s: 'limit', n: p.n });
  },
};
