import type { PipeDef } from '../pipe-table.js';

export const topPipe: PipeDef<'top'> = {
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
};
