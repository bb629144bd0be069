import { describe, expect, it } from 'vitest';
import {
  and,
  cond,
  type FilterNode,
  measure,
  not,
  or,
  parseCidr,
  parseNumeric,
  simplify,
  TRUE,
  text,
  toTimeMs,
} from '../../../src/filter/ast.js';
import { explain } from '../../../src/syntax/explain.js';

describe('filter AST constructors', () => {
  it('freezes nodes and list values', () => {
    const c = cond('host', 'in', ['a', 'b']);
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.value)).toBe(true);
    const a = and(c, text('x'));
    expect(Object.isFrozen(a)).toBe(true);
    expect(a.kind === 'and' && Object.isFrozen(a.items)).toBe(true);
    expect(Object.isFrozen(TRUE)).toBe(true);
  });

  it('copies list values so later mutation of the input does not leak in', () => {
    const values = ['a'];
    const c = cond('host', 'in', values);
    values.push('b');
    expect(c.value).toEqual(['a']);
  });

  it('builds exists without a value key', () => {
    expect(cond('user', 'exists')).toEqual({ kind: 'cond', field: 'user', op: 'exists' });
    expect('value' in cond('user', 'exists')).toBe(false);
  });

  it('flattens nested and/or and drops true from and', () => {
    const [a, b, c] = [text('a'), text('b'), text('c')];
    expect(and(a, and(b, c))).toEqual({ kind: 'and', items: [a, b, c] });
    expect(or(or(a, b), c)).toEqual({ kind: 'or', items: [a, b, c] });
    expect(and(a, TRUE)).toBe(a);
    expect(and()).toBe(TRUE);
    expect(and(TRUE, TRUE)).toBe(TRUE);
    expect(or(a)).toBe(a);
    expect(or(a, TRUE)).toBe(TRUE);
    expect(or(a, and(b, c))).toEqual({ kind: 'or', items: [a, { kind: 'and', items: [b, c] }] });
  });

  it('cancels double negation and folds negatable operators', () => {
    const a = text('a');
    expect(not(not(a))).toBe(a);
    expect(not(cond('host', 'eq', 'x'))).toEqual(cond('host', 'ne', 'x'));
    expect(not(cond('host', 'ne', 'x'))).toEqual(cond('host', 'eq', 'x'));
    expect(not(cond('host', 'in', ['x']))).toEqual(cond('host', 'not_in', ['x']));
    expect(not(cond('host', 'contains', 'x'))).toEqual(cond('host', 'not_contains', 'x'));
    expect(not(cond('host', 'exists'))).toEqual(cond('host', 'not_exists'));
    expect(not(cond('status', 'gt', 5))).toEqual({ kind: 'not', item: cond('status', 'gt', 5) });
  });

  it('simplifies a hand-built tree into the normal form', () => {
    const raw: FilterNode = {
      kind: 'and',
      items: [
        { kind: 'true' },
        { kind: 'and', items: [{ kind: 'text', value: 'a' }] },
        { kind: 'not', item: { kind: 'not', item: { kind: 'cond', field: 'x', op: 'in', value: ['1'] } } },
      ],
    };
    const s = simplify(raw);
    expect(s).toEqual(and(text('a'), cond('x', 'in', ['1'])));
    expect(simplify(s)).toEqual(s);
    expect(Object.isFrozen(s)).toBe(true);
  });

  it('measures depth and size, counting list values', () => {
    expect(measure(TRUE)).toEqual({ depth: 1, nodes: 1 });
    expect(measure(and(text('a'), not(cond('status', 'gt', 1))))).toEqual({ depth: 3, nodes: 4 });
    expect(measure(cond('host', 'in', ['a', 'b', 'c']))).toEqual({ depth: 1, nodes: 3 });
  });
});

describe('value coercions', () => {
  it('parses decimal numbers only', () => {
    expect(parseNumeric(5)).toBe(5);
    expect(parseNumeric('42')).toBe(42);
    expect(parseNumeric('-1.5e3')).toBe(-1500);
    expect(parseNumeric('.5')).toBe(0.5);
    expect(parseNumeric('0x10')).toBeUndefined();
    expect(parseNumeric(' 1')).toBeUndefined();
    expect(parseNumeric('Infinity')).toBeUndefined();
    expect(parseNumeric('')).toBeUndefined();
    expect(parseNumeric(true)).toBeUndefined();
    expect(parseNumeric(Number.NaN)).toBeUndefined();
  });

  it('reads times as Unix seconds or ISO 8601 (UTC unless an offset is given)', () => {
    expect(toTimeMs(1714557600)).toBe(1714557600000);
    expect(toTimeMs('1714557600.123')).toBe(1714557600123);
    expect(toTimeMs('2024-05-01')).toBe(Date.UTC(2024, 4, 1));
    expect(toTimeMs('2024-05-01T10:00')).toBe(Date.UTC(2024, 4, 1, 10));
    expect(toTimeMs('2024-05-01 10:00:00.5Z')).toBe(Date.UTC(2024, 4, 1, 10, 0, 0, 500));
    expect(toTimeMs('2024-05-01T12:00:00+02:00')).toBe(Date.UTC(2024, 4, 1, 10));
    expect(toTimeMs('2024-05-01T05:30:00-0430')).toBe(Date.UTC(2024, 4, 1, 10));
    expect(toTimeMs('0099-01-01')).toBe(new Date('0099-01-01T00:00:00Z').getTime());
    expect(toTimeMs('2024-02-30')).toBeUndefined();
    expect(toTimeMs('2024-13-01')).toBeUndefined();
    expect(toTimeMs('2024-05-01T24:00')).toBeUndefined();
    expect(toTimeMs('yesterday')).toBeUndefined();
    expect(toTimeMs(false)).toBeUndefined();
  });

  it('parses CIDR blocks of both families and refuses the rest', () => {
    expect(parseCidr('10.0.0.0/8')).toEqual({ address: '10.0.0.0', prefix: 8, family: 4 });
    expect(parseCidr('2001:db8::/32')).toEqual({ address: '2001:db8::', prefix: 32, family: 6 });
    expect(parseCidr('10.0.0.0/33')).toBeUndefined();
    expect(parseCidr('::/129')).toBeUndefined();
    expect(parseCidr('10.0.0.0')).toBeUndefined();
    expect(parseCidr('10.0.0/8')).toBeUndefined();
    expect(parseCidr('10.0.0.0/x')).toBeUndefined();
    expect(parseCidr('/8')).toBeUndefined();
  });
});

describe('explain', () => {
  it.each<[FilterNode, string]>([
    [TRUE, '*'],
    [cond('host', 'eq', 'web-1'), 'host:"web-1"'],
    [cond('status', 'eq', 200), 'status:200'],
    [cond('flag', 'eq', true), 'flag:true'],
    [cond('host', 'ne', 'a'), 'NOT host:"a"'],
    [cond('status', 'in', [500, 502, -1]), 'status:(500 OR 502 OR "-1")'],
    [cond('host', 'not_in', ['a', 'b']), 'NOT host:("a" OR "b")'],
    [cond('message', 'contains', 'time out'), 'message:*time\\ out*'],
    [cond('message', 'not_contains', 'x'), 'NOT message:*x*'],
    [cond('path', 'startswith', '/var/'), 'path:\\/var\\/*'],
    [cond('host', 'endswith', '.example.com'), 'host:*.example.com'],
    [cond('path', 'regex', 'a/b\\/c'), 'path:/a\\/b\\/c/'],
    [cond('status', 'gte', 500), 'status:>=500'],
    [cond('host', 'gt', 'm'), 'host:>"m"'],
    [cond('status', 'lt', 300), 'status:<300'],
    [cond('status', 'lte', 300), 'status:<=300'],
    [cond('status', 'between', [100, 200]), 'status:[100 TO 200]'],
    [cond('ts', 'between', ['2024-01-01', '2024-02-01']), 'ts:["2024-01-01" TO "2024-02-01"]'],
    [cond('user', 'exists'), '_exists_:user'],
    [cond('user', 'not_exists'), 'NOT _exists_:user'],
    [cond('src_ip', 'cidr', '10.0.0.0/8'), 'src_ip:10.0.0.0/8'],
    [text('error'), 'error'],
    [text('AND'), '"AND"'],
    [text('two words', true), '"two words"'],
    [or(text('a'), and(text('b'), text('c'))), 'a OR b AND c'],
    [and(or(text('a'), text('b')), text('c')), '(a OR b) AND c'],
    [not(and(text('a'), text('b'))), 'NOT (a AND b)'],
    [not(or(text('a'), text('b'))), 'NOT (a OR b)'],
    [and(not(text('a')), text('b')), 'NOT a AND b'],
  ])('%j → %s', (node, expected) => {
    expect(explain(node)).toBe(expected);
  });
});
