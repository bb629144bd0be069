import type { PipeDef } from '../pipe-table.js';

export const fieldsPipe: PipeDef<'fields'> = {
  rowwise: true,
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
};
