import { describe, expect, it } from 'vitest';
import { checkRegex, compileRegex, requiredLiteral } from '../../../src/filter/regex.js';

describe('requiredLiteral', () => {
  it.each([
    ['Failed password for (root|admin) from', 'Failed password for '],
    ['^web-\\d+$', 'web-'],
    ['a\\.b\\.c', 'a.b.c'],
    ['[abc]defg', 'defg'],
    ['[]x]defg', 'defg'],
    ['foo(bar)*baz', 'foo'],
    ['ab{2}cde', 'cde'],
    // An escape's arguments are not text: \x{1F600} is one character, not "1F600".
    ['\\x{1F600}abc', 'abc'],
    ['\\x41BCD', 'BCD'],
    ['abc\\pLdef', 'abc'],
    ['\\101BCD', 'BCD'],
  ])('%s → %s', (pattern, literal) => {
    expect(requiredLiteral(pattern)).toBe(literal);
  });

  it.each([
    'abc?d',
    'x|yyyy',
    '(?i)hello',
    'abc(?i)def',
    '\\Qabc\\E',
    'ab',
    '(unclosed',
    '\\x{1F600}',
    'x\\p{Greek}yz',
  ])('%s has none', (pattern) => {
    expect(requiredLiteral(pattern)).toBeUndefined();
  });

  it('never rules out a value the regex matches', () => {
    const values = [
      'Failed password for root from x',
      'web-12',
      'a.b.c',
      'xdefg',
      'foobarbarbaz',
      'abbcde',
      'ABCdef',
    ];
    for (const p of [
      'Failed password for (root|admin) from',
      '^web-\\d+$',
      'a\\.b\\.c',
      '[x]defg',
      'foo(bar)*baz',
      'ab{2}cde',
    ]) {
      const re = compileRegex(p);
      const lit = requiredLiteral(p) as string;
      for (const v of values) if (re.test(v)) expect(v.includes(lit), `${p} on ${v}`).toBe(true);
    }
  });
});

describe('checkRegex', () => {
  it('names what RE2 refuses', () => {
    expect(checkRegex('a(?=b)')).toMatch(/lookaround/);
    expect(checkRegex('(a)\\1')).toMatch(/backreferences/);
    expect(checkRegex('\\u0041')).toMatch(/not supported by RE2/);
    expect(checkRegex('a(b')).toMatch(/invalid regular expression/);
    expect(checkRegex('(?U)a+\\pL[[:^alpha:]]')).toBeUndefined();
  });
});

describe('checkRegex and quoting', () => {
  it('reads an escaped backslash before Q as a backslash, not as \\Q', () => {
    // `\\Qa(?<g>` is a literal backslash, "Qa" and an unclosed (JavaScript-style) group.
    expect(checkRegex('\\\\Qa(?<g>')).toBeDefined();
    expect(checkRegex('\\Qa(?<g>\\E')).toBeUndefined();
    expect(compileRegex('\\Qa(?<g>\\E').test('a(?<g>')).toBe(true);
  });
});
