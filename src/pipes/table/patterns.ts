import type { PipeDef } from '../pipe-table.js';

export const patternsPipe: PipeDef<'patterns'> = {
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
};
