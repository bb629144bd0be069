import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PARSER_FILE, parserSource } from '../../../scripts/query-parser.js';
import { AppError } from '../../../src/errors/errors.js';
import { and, cond, type FilterNode, not, or, TRUE, text } from '../../../src/filter/ast.js';
import { explain } from '../../../src/syntax/explain.js';
import { MAX_QUERY_LENGTH, parseQuery, QuerySyntaxError } from '../../../src/syntax/parse-query.js';

const [a, b, c] = [text('a'), text('b'), text('c')];

function syntaxError(query: string): QuerySyntaxError {
  try {
    parseQuery(query);
  } catch (error) {
    expect(error).toBeInstanceOf(QuerySyntaxError);
    return error as QuerySyntaxError;
  }
  throw new Error(`expected a syntax error for ${JSON.stringify(query)}`);
}

describe('the parser', () => {
  it('is what Peggy generates from the grammar (after a change: npm run gen:parser)', () => {
    expect(readFileSync(PARSER_FILE, 'utf8')).toBe(parserSource());
  });
});

describe('parseQuery: structure and precedence', () => {
  it.each<[string, FilterNode]>([
    ['', TRUE],
    ['   \n\t ', TRUE],
    ['*', TRUE],
    ['*:*', TRUE],
    ['a', a],
    ['a b', and(a, b)],
    ['a AND b', and(a, b)],
    ['a OR b', or(a, b)],
    ['a OR b AND c', or(a, and(b, c))],
    ['a AND b OR c', or(and(a, b), c)],
    ['a OR b c', or(a, and(b, c))],
    ['NOT a AND b', and(not(a), b)],
    ['NOT (a AND b)', not(and(a, b))],
    ['-a b', and(not(a), b)],
    ['+a -b', and(a, not(b))],
    ['NOT NOT a', a],
    ['--a', a],
    ['(a OR b) c', and(or(a, b), c)],
    ['((a))', a],
    ['a(b)', and(a, b)],
    ['a AND(b OR c)', and(a, or(b, c))],
    ['  a   OR   b  ', or(a, b)],
    ['a\nAND\nb', and(a, b)],
    ['and or not', and(text('and'), text('or'), text('not'))],
    ['ANDROID NOTE ORACLE', and(text('ANDROID'), text('NOTE'), text('ORACLE'))],
    ['a AND * AND b', and(a, b)],
    ['NOT *', not(TRUE)],
  ])('%j', (query, expected) => {
    expect(parseQuery(query)).toEqual(expected);
  });
});

describe('parseQuery: terms and values', () => {
  it.each<[string, FilterNode]>([
    ['"quoted phrase"', text('quoted phrase', true)],
    ['"say \\"hi\\" \\\\ bye"', text('say "hi" \\ bye', true)],
    ['"a*b (c) AND d:e"', text('a*b (c) AND d:e', true)],
    ['timeout*', text('timeout')],
    ['*timeout*', text('timeout')],
    ['time*out', cond('message', 'regex', '(?is)time.*out')],
    ['a\\ b', text('a b')],
    ['\\-x', text('-x')],
    ['\\AND', text('AND')],
    ['foo\\*', text('foo*')],
    ['/err(or)?\\d+/', cond('message', 'regex', 'err(or)?\\d+')],
    ['host:web-01', cond('host', 'eq', 'web-01')],
    ['host: web-01', cond('host', 'eq', 'web-01')],
    ['status:200', cond('status', 'eq', '200')],
    ['http.method:GET', cond('http.method', 'eq', 'GET')],
    ['user@domain:x', cond('user@domain', 'eq', 'x')],
    ['host:"a b"', cond('host', 'eq', 'a b')],
    ['host:"web*"', cond('host', 'eq', 'web*')],
    ['host:"10.0.0.0/8"', cond('host', 'eq', '10.0.0.0/8')],
    ['path:\\/var\\/log', cond('path', 'eq', '/var/log')],
    ['path:a/b', cond('path', 'eq', 'a/b')],
    ['url:http\\://x', cond('url', 'eq', 'http://x')],
    ['msg:a\\ b\\(c\\)', cond('msg', 'eq', 'a b(c)')],
    ['time:10:30', cond('time', 'eq', '10:30')],
    ['status:>=500', cond('status', 'gte', 500)],
    ['status:>500', cond('status', 'gt', 500)],
    ['status:<500', cond('status', 'lt', 500)],
    ['status:<=500', cond('status', 'lte', 500)],
    ['status:>= 500', cond('status', 'gte', 500)],
    ['latency:>-1.5', cond('latency', 'gt', -1.5)],
    ['status:>="500"', cond('status', 'gte', '500')],
    ['host:>m', cond('host', 'gt', 'm')],
    ['ts:>=2024-05-01T10:00:00Z', cond('ts', 'gte', '2024-05-01T10:00:00Z')],
    ['status:[100 TO 200]', cond('status', 'between', [100, 200])],
    ['host:[a TO m]', cond('host', 'between', ['a', 'm'])],
    ['ts:["2024-05-01" TO "2024-05-02"]', cond('ts', 'between', ['2024-05-01', '2024-05-02'])],
    ['status:["100" TO 200]', cond('status', 'between', ['100', '200'])],
    ['status:{100 TO 200}', and(cond('status', 'gt', 100), cond('status', 'lt', 200))],
    ['status:[100 TO 200}', and(cond('status', 'gte', 100), cond('status', 'lt', 200))],
    ['status:[100 TO *]', cond('status', 'gte', 100)],
    ['status:{* TO 100}', cond('status', 'lt', 100)],
    ['status:[* TO *]', cond('status', 'exists')],
    ['status:[ 1 TO 2 ]', cond('status', 'between', [1, 2])],
    ['src_ip:10.0.0.0/8', cond('src_ip', 'cidr', '10.0.0.0/8')],
    ['dst_ip:2001:db8::/32', cond('dst_ip', 'cidr', '2001:db8::/32')],
    ['src_ip:10.1.2.3', cond('src_ip', 'eq', '10.1.2.3')],
    ['dst_ip:::1', cond('dst_ip', 'eq', '::1')],
    ['path:/var\\/log$/', cond('path', 'regex', 'var/log$')],
    ['path:/a\\\\/', cond('path', 'regex', 'a\\\\')],
    ['host:web*', cond('host', 'startswith', 'web')],
    ['host:*.example.com', cond('host', 'endswith', '.example.com')],
    ['host:*eb*', cond('host', 'contains', 'eb')],
    ['host:w*b-*1', cond('host', 'regex', '^w.*b-.*1$')],
    ['host:*a*.b*', cond('host', 'regex', 'a.*\\.b')],
    ['host:web\\*', cond('host', 'eq', 'web*')],
    ['user:*', cond('user', 'exists')],
    ['_exists_:user', cond('user', 'exists')],
    ['-_exists_:user', cond('user', 'not_exists')],
    ['-host:a', cond('host', 'ne', 'a')],
    ['NOT host:a', cond('host', 'ne', 'a')],
    ['host:(a OR b OR "c d")', cond('host', 'in', ['a', 'b', 'c d'])],
    ['host:(a OR (b OR c))', cond('host', 'in', ['a', 'b', 'c'])],
    ['-host:(a OR b)', cond('host', 'not_in', ['a', 'b'])],
    ['host:(a)', cond('host', 'eq', 'a')],
    ['host:(a b)', and(cond('host', 'eq', 'a'), cond('host', 'eq', 'b'))],
    ['host:(web* OR -db)', or(cond('host', 'startswith', 'web'), cond('host', 'ne', 'db'))],
    ['status:(>=500 AND <600)', and(cond('status', 'gte', 500), cond('status', 'lt', 600))],
    ['a:AND', cond('a', 'eq', 'AND')],
  ])('%j', (query, expected) => {
    expect(parseQuery(query)).toEqual(expected);
  });

  it('combines fields, text and operators', () => {
    expect(parseQuery('severity:error AND (status:>=500 OR "upstream timed out") -host:db*')).toEqual(
      and(
        cond('severity', 'eq', 'error'),
        or(cond('status', 'gte', 500), text('upstream timed out', true)),
        not(cond('host', 'startswith', 'db')),
      ),
    );
  });
});

describe('parseQuery: errors name the position', () => {
  it.each<[string, number, number, number, RegExp]>([
    ['a AND )', 6, 1, 7, /expected a search term but found "\)"/],
    ['a AND', 5, 1, 6, /expected a search term but found end of input/],
    ['(a OR b', 7, 1, 8, /expected .*"\)".* but found end of input/],
    ['a)', 1, 1, 2, /but found "\)"/],
    ['status:', 7, 1, 8, /expected a value but found end of input/],
    ['status:>', 8, 1, 9, /expected a value but found end of input/],
    ['"unterminated', 13, 1, 14, /expected "\\"" but found end of input/],
    ['path:/unterminated', 18, 1, 19, /expected "\/" but found end of input/],
    ['x:[1 TO 2', 9, 1, 10, /"\]"|"}"|but found end of input/],
    ['x:[1 2]', 5, 1, 6, /but found "2"/],
    ['a OR\n  OR b', 7, 2, 3, /expected a search term but found "O"/],
    ['http://example.com', 7, 1, 8, /regular expression must be followed by/],
    ['trailing\\', 9, 1, 10, /but found end of input/],
    ['status:>=abc', 7, 1, 8, /"status" is an integer field/],
    ['x AND ts:[2024-01-01 TO soon]', 9, 1, 10, /"ts" is a time field/],
    ['src_ip:10.0.0.0/33', 7, 1, 8, /invalid CIDR block/],
    ['path:/a(?=b)/', 5, 1, 6, /lookaround/],
    ['ts:abc*', 3, 1, 4, /"ts" is a time field/],
    ['/(a)\\1/', 0, 1, 1, /backreferences/],
    [`${'f'.repeat(257)}:x`, 0, 1, 1, /field name must be at most 256/],
  ])('%j', (query, offset, line, column, message) => {
    const error = syntaxError(query);
    expect({ offset: error.offset, line: error.line, column: error.column }).toEqual({
      offset,
      line,
      column,
    });
    expect(error.message).toContain(`at position ${offset} (line ${line}, column ${column}): `);
    expect(error.message).toMatch(message);
  });

  it('is a 400 AppError whose errors name the parameter', () => {
    const error = syntaxError('a AND )');
    expect(error).toBeInstanceOf(AppError);
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_query');
    expect(error.message).toBe(
      'Syntax error at position 6 (line 1, column 7): expected a search term but found ")"',
    );
    expect(error.errors).toEqual({ query: [error.message] });
    try {
      parseQuery('(', { path: 'params.query' });
    } catch (e) {
      expect((e as QuerySyntaxError).errors).toEqual({ 'params.query': [(e as Error).message] });
    }
  });

  it('limits length, nesting and size', () => {
    expect(() => parseQuery('a '.repeat(MAX_QUERY_LENGTH / 2))).toThrow(
      /more than 1000 conditions|too complex/,
    );
    const tooLong = syntaxError('a'.repeat(MAX_QUERY_LENGTH + 1));
    expect(tooLong.message).toMatch(/longer than 10000 characters/);
    expect(tooLong.offset).toBe(MAX_QUERY_LENGTH);
    expect(parseQuery(`${'('.repeat(16)}a${')'.repeat(16)}`)).toEqual(a);
    const deep = syntaxError(`${'('.repeat(17)}a${')'.repeat(17)}`);
    expect(deep.offset).toBe(16);
    expect(deep.message).toMatch(/nested more than 16 levels/);
    // Parentheses inside quotes do not count.
    expect(parseQuery(`"${'('.repeat(40)}"`)).toEqual(text('('.repeat(40), true));
    let nested = 'x';
    for (let i = 0; i < 10; i++) nested = `(a${i} OR b${i} ${nested})`;
    expect(syntaxError(nested).message).toMatch(/^Query too complex at position 0 .*16 levels of nesting/);
  });

  it('does not exhaust the stack on long prefix chains', () => {
    expect(parseQuery(`${'-'.repeat(5000)}a`)).toEqual(a);
    expect(parseQuery(`${'NOT '.repeat(2001)}a`)).toEqual(not(a));
  });
});

describe('explain round trip (examples)', () => {
  it.each([
    'a OR b AND c',
    'NOT a AND b',
    '(a OR b) AND NOT (c OR d)',
    'severity:error AND status:>=500',
    'host:web* OR host:*db OR host:*cache*',
    'path:\\/var\\/log\\/* AND -path:/\\.gz$/',
    'src_ip:10.0.0.0/8 OR dst_ip:2001:db8::/32',
    'status:[500 TO 599] AND ts:>="2024-05-01"',
    'host:("a" OR "b c") AND NOT _exists_:user',
    '"quoted \\"phrase\\"" AND plain',
    'time*out',
    'host:w*b',
    'status:{100 TO 200]',
  ])('%s', (query) => {
    const ast = parseQuery(query);
    const rendered = explain(ast);
    expect(parseQuery(rendered)).toEqual(ast);
    expect(explain(parseQuery(rendered))).toBe(rendered);
  });
});
