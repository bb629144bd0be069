import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseQuery, QuerySyntaxError } from '../../../src/syntax/parse-query.js';
import {
  addTerm,
  completionSpot,
  errorContext,
  errorPosition,
  filterTerm,
  hasPipes,
  quoteValue,
  tokenize,
} from '../../../ui/src/pages/search/query.js';

// The web UI's reading of the query language (docs/query-language.md): highlighting
// tokens, completion spots, the filters the field list adds, and where the server's
// syntax errors point.

const types = (q: string) => tokenize(q).map((t) => [t.text, t.type]);

describe('tokenize', () => {
  it('tells field names, values, keywords, operators and free text apart', () => {
    expect(types('error AND host:web-1 -app:cron')).toEqual([
      ['error', null],
      ['AND', 'keyword'],
      ['host', 'propertyName'],
      [':', 'punctuation'],
      ['web-1', 'string'],
      ['-', 'operator'],
      ['app', 'propertyName'],
      [':', 'punctuation'],
      ['cron', 'string'],
    ]);
  });

  it('reads quoted phrases with escapes, regexes, ranges, comparisons and wildcards', () => {
    expect(types('"say \\"hi\\"" message:/a\\/b c/ status:[500 TO 599} bytes:>=1024 host:web*')).toEqual([
      ['"say \\"hi\\""', 'string'],
      ['message', 'propertyName'],
      [':', 'punctuation'],
      ['/a\\/b c/', 'regexp'],
      ['status', 'propertyName'],
      [':', 'punctuation'],
      ['[', 'squareBracket'],
      ['500', 'number'],
      ['TO', 'keyword'],
      ['599', 'number'],
      ['}', 'squareBracket'],
      ['bytes', 'propertyName'],
      [':', 'punctuation'],
      ['>=', 'operator'],
      ['1024', 'number'],
      ['host', 'propertyName'],
      [':', 'punctuation'],
      ['web*', 'atom'],
    ]);
  });

  it('keeps lower-case keywords, inner dashes and URLs as words', () => {
    expect(types('a and b-c url:https://x.org/p NOT (x OR y)')).toEqual([
      ['a', null],
      ['and', null],
      ['b-c', null],
      ['url', 'propertyName'],
      [':', 'punctuation'],
      ['https://x.org/p', 'string'],
      ['NOT', 'keyword'],
      ['(', 'paren'],
      ['x', null],
      ['OR', 'keyword'],
      ['y', null],
      [')', 'paren'],
    ]);
  });

  it('carries an unterminated phrase onto the next line', () => {
    expect(types('"a\nb" c')).toEqual([
      ['"a', 'string'],
      ['b"', 'string'],
      ['c', null],
    ]);
  });
});

describe('filters', () => {
  it('quotes values literally', () => {
    expect(quoteValue('web-1')).toBe('"web-1"');
    expect(quoteValue('a "b" \\c')).toBe('"a \\"b\\" \\\\c"');
    expect(filterTerm('host', 'web*')).toBe('host:"web*"');
    expect(filterTerm('path', '/var/log', { negate: true })).toBe('-path:"/var/log"');
    expect(filterTerm('status', '404', { numeric: true })).toBe('status:404');
    expect(filterTerm('status', 'n/a', { numeric: true })).toBe('status:"n/a"');
    expect(filterTerm('http.method', 'OR')).toBe('http.method:"OR"');
  });

  it('narrows a query, keeping its meaning', () => {
    expect(addTerm('', 'host:"a"')).toBe('host:"a"');
    expect(addTerm('*', 'host:"a"')).toBe('host:"a"');
    expect(addTerm('error', 'host:"a"')).toBe('error host:"a"');
    expect(addTerm('error OR warning', 'host:"a"')).toBe('(error OR warning) host:"a"');
    expect(addTerm('(a OR b) c', 'host:"a"')).toBe('(a OR b) c host:"a"');
    expect(addTerm('error host:"a"', 'host:"a"')).toBe('error host:"a"');
    expect(addTerm('error -host:"a"', 'host:"a"')).toBe('error host:"a"');
    expect(addTerm('error host:"a"', '-host:"a"')).toBe('error -host:"a"');
    expect(addTerm('status:[1 TO 2] x', 'host:"a"')).toBe('status:[1 TO 2] x host:"a"');
  });
});

describe('pipes', () => {
  it('highlights pipe names, keywords, functions, operators, numbers and strings', () => {
    expect(types('error | stats count() as n by host | where n > 10 | extract "a <b>"')).toEqual([
      ['error', null],
      ['|', 'operator'],
      ['stats', 'keyword'],
      ['count', 'atom'],
      ['(', 'paren'],
      [')', 'paren'],
      ['as', 'keyword'],
      ['n', 'propertyName'],
      ['by', 'keyword'],
      ['host', 'propertyName'],
      ['|', 'operator'],
      ['where', 'keyword'],
      ['n', 'propertyName'],
      ['>', 'operator'],
      ['10', 'number'],
      ['|', 'operator'],
      ['extract', 'keyword'],
      ['"a <b>"', 'string'],
    ]);
  });

  it('tells a query with pipes as the parser does: a | in quotes, a regex or escaped is text', () => {
    for (const q of ['a | stats count()', '| top host', 'x|limit 5', '/a|b/ | limit 1'])
      expect(hasPipes(q), q).toBe(true);
    for (const q of ['"a | b"', '/a|b/', 'a\\|b', 'host:web-1', '']) expect(hasPipes(q), q).toBe(false);
  });

  it('completes pipe names after | and functions or fields inside a pipe', () => {
    expect(completionSpot('error | st', 10)).toEqual({ kind: 'pipe', from: 8, prefix: 'st' });
    expect(completionSpot('error |', 7)).toEqual({ kind: 'pipe', from: 7, prefix: '' });
    expect(completionSpot('x | stats co', 12)).toEqual({ kind: 'pipe-word', from: 10, prefix: 'co' });
    expect(completionSpot('x | stats count() by ho', 23)).toEqual({
      kind: 'pipe-word',
      from: 21,
      prefix: 'ho',
    });
    expect(completionSpot('x | extract "a <', 16)).toBeNull();
  });
});

describe('completionSpot', () => {
  it('finds field names and values being typed', () => {
    expect(completionSpot('ho', 2)).toEqual({ kind: 'field', from: 0, prefix: 'ho' });
    expect(completionSpot('error -ho', 9)).toEqual({ kind: 'field', from: 7, prefix: 'ho' });
    expect(completionSpot('host:we', 7)).toEqual({ kind: 'value', field: 'host', from: 5, prefix: 'we' });
    expect(completionSpot('(host:', 6)).toEqual({ kind: 'value', field: 'host', from: 6, prefix: '' });
    expect(completionSpot('app:"cr', 7)).toEqual({ kind: 'value', field: 'app', from: 4, prefix: '"cr' });
    expect(completionSpot('"an open phrase', 15)).toBeNull();
  });
});

describe('syntax errors', () => {
  const at = (query: string) => {
    try {
      parseQuery(query);
    } catch (e) {
      if (e instanceof QuerySyntaxError) return { message: e.message, offset: e.offset };
      throw e;
    }
    return null;
  };

  it("reads the position from the server's message", () => {
    const e = at('status:(500 OR');
    expect(e?.message).toBe(
      'Syntax error at position 14 (line 1, column 15): expected a value but found end of input',
    );
    expect(errorPosition(e?.message, 'status:(500 OR')).toBe(14);
    expect(
      errorPosition(at('host:web-1 AND (status:500 OR )')?.message, 'host:web-1 AND (status:500 OR )'),
    ).toBe(30);
    // No position, or one beyond this query (the message is about another): none.
    expect(errorPosition('The search failed.', 'x')).toBeNull();
    expect(errorPosition(null, 'x')).toBeNull();
    expect(
      errorPosition('Syntax error at position 9 (line 1, column 10): expected a value', 'short'),
    ).toBeNull();
  });

  it('agrees with the parser on every query it refuses', () => {
    const chars = fc.constantFrom(...'ab:()"[]{}/\\*<>=-+ \nTOANDORNOT1é😀'.split(''));
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 24 }), (parts) => {
        const query = parts.join('');
        const e = at(query);
        if (e) expect(errorPosition(e.message, query)).toBe(e.offset);
      }),
      { numRuns: 500 },
    );
  });

  it('shows the query around the position, one character marked', () => {
    expect(errorContext('status:(500 OR', 14)).toEqual({ before: 'status:(500 OR', at: '', after: '' });
    expect(errorContext('a AND (b OR ) c', 12)).toEqual({ before: 'a AND (b OR ', at: ')', after: ' c' });
    expect(errorContext('x\ny )', 4)).toEqual({ before: 'x y ', at: ')', after: '' });
    expect(errorContext('😀) a', 2)).toEqual({ before: '😀', at: ')', after: ' a' });
    expect(errorContext('a 😀 b', 2)).toEqual({ before: 'a ', at: '😀', after: ' b' });
    const long = `${'a'.repeat(100)} ) ${'b'.repeat(100)}`;
    expect(errorContext(long, 101, 10)).toEqual({
      before: `…${'a'.repeat(9)} `,
      at: ')',
      after: ` ${'b'.repeat(9)}…`,
    });
  });
});
