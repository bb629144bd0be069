import { describe, expect, it } from 'vitest';
import { PatternMerges } from '../../../src/features/patterns/pattern-merges.js';

describe('pattern merges', () => {
  it('resolves a chain to the last id it went into', () => {
    const m = new PatternMerges();
    m.note('b', ['a']);
    m.note('c', ['b']);
    expect(m.resolve('a')).toBe('c');
    expect(m.take().sort()).toEqual([
      ['a', 'c'],
      ['b', 'c'],
    ]);
  });

  it('never hands out an id merged into itself, even when a merged id lives again', () => {
    const m = new PatternMerges();
    m.note('b', ['a']);
    // `a` learnt again, and `b` merged into it: no cycle, and `a` is not rewritten.
    m.note('a', ['b']);
    expect(m.resolve('b')).toBe('a');
    expect(m.resolve('a')).toBe('a');
    const pairs = m.take();
    expect(pairs).toEqual([['b', 'a']]);
    expect(pairs.every(([from, to]) => from !== to)).toBe(true);
    m.note('x', ['x']);
    expect(m.take()).toEqual([]);
  });
});
