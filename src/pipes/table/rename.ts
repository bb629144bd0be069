import type { PipeDef } from '../pipe-table.js';

export const renamePipe: PipeDef<'rename'> = {
  rowwise: true,
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
};
