import type { PipeDef } from '../pipe-table.js';

export const timechartPipe: PipeDef<'timechart'> = {
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
};
