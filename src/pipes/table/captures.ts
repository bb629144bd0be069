import type { PipeOf, PipeScope } from '../pipe-table.js';

/** The captures of `extract` and `rex`: each named group a text column. */
export function captures(
  { regex, names }: { regex: string; names: Array<string | null> },
  p: PipeOf<'extract' | 'rex'>,
  scope: PipeScope,
): void {
  const source = scope.text(scope.ref(p.from ?? { name: 'message', at: p.at }));
  names.forEach((name, i) => {
    if (name === null) return;
    const id = scope.id();
    scope.stages.push({
      s: 'derive',
      id,
      e: { k: 'capture', e: source, regex, group: i + 1, groups: names.length },
    });
    scope.define(name, { k: 'ref', ref: { col: id }, type: 'string' }, 'string');
  });
}
