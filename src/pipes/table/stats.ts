import type { PipeDef } from '../pipe-table.js';

export const statsPipe: PipeDef<'stats'> = {
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
};
