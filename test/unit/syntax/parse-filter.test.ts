import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../src/errors/errors.js';
import { and, cond, FILTER_OPS, not, or, TRUE } from '../../../src/filter/ast.js';
import { FilterValidationError, parseFilter } from '../../../src/syntax/parse-filter.js';

/** The errors a filter raises, keyed by path. */
function errorsOf(input: unknown): Record<string, string[]> {
  try {
    parseFilter(input);
  } catch (error) {
    expect(error).toBeInstanceOf(FilterValidationError);
    return (error as FilterValidationError).errors;
  }
  throw new Error('expected a FilterValidationError');
}

/** The single error path a filter raises, with its message matched. */
function expectError(input: unknown, path: string, message: RegExp) {
  const errors = errorsOf(input);
  expect(Object.keys(errors)).toEqual([path]);
  expect(errors[path]?.join(' ')).toMatch(message);
}

const nest = (depth: number): unknown => (depth === 0 ? ['host', 'eq', 'a'] : { all: [nest(depth - 1)] });

describe('parseFilter: accepted forms', () => {
  it('accepts absent and empty filters as true', () => {
    expect(parseFilter(undefined)).toBe(TRUE);
    expect(parseFilter([])).toBe(TRUE);
  });

  it('reads the object and array forms alike', () => {
    const fromObjects = parseFilter([
      { field: 'severity', op: 'eq', value: 'error' },
      { field: 'user', op: 'exists' },
      { field: 'status', op: 'between', value: [500, 599] },
    ]);
    const fromArrays = parseFilter([
      ['severity', 'eq', 'error'],
      ['user', 'exists'],
      ['status', 'between', [500, 599]],
    ]);
    expect(fromObjects).toEqual(fromArrays);
    expect(fromObjects).toEqual(
      and(cond('severity', 'eq', 'error'), cond('user', 'exists'), cond('status', 'between', [500, 599])),
    );
  });

  it('reads one condition as itself, and exists with a null value', () => {
    expect(parseFilter([['host', 'eq', 'a']])).toEqual(cond('host', 'eq', 'a'));
    expect(parseFilter([{ field: 'user', op: 'not_exists', value: null }])).toEqual(
      cond('user', 'not_exists'),
    );
    expect(parseFilter([['user', 'exists', null]])).toEqual(cond('user', 'exists'));
  });

  it('reads groups', () => {
    const ast = parseFilter([
      { any: [['host', 'eq', 'a'], { field: 'host', op: 'eq', value: 'b' }] },
      {
        all: [
          ['status', 'gte', 500],
          ['status', 'lt', 600],
        ],
      },
      { not: ['app', 'startswith', 'x'] },
      {
        not: {
          any: [
            ['a', 'eq', 1],
            ['b', 'eq', 2],
          ],
        },
      },
    ]);
    expect(ast).toEqual(
      and(
        or(cond('host', 'eq', 'a'), cond('host', 'eq', 'b')),
        cond('status', 'gte', 500),
        cond('status', 'lt', 600),
        not(cond('app', 'startswith', 'x')),
        not(or(cond('a', 'eq', 1), cond('b', 'eq', 2))),
      ),
    );
  });

  it('folds a negated negatable condition and treats all:[] as true', () => {
    expect(parseFilter([{ not: ['host', 'eq', 'a'] }])).toEqual(cond('host', 'ne', 'a'));
    expect(parseFilter([{ all: [] }])).toBe(TRUE);
  });

  it('accepts every operator with a suitable value', () => {
    const values: Record<(typeof FILTER_OPS)[number], unknown> = {
      eq: 'x',
      ne: 1,
      in: ['a', 2, true],
      not_in: ['a'],
      contains: 'x',
      not_contains: 'x',
      startswith: 'x',
      endswith: 'x',
      regex: '(?i)^a+[[:digit:]]\\d{2,5}$',
      gt: 5,
      gte: '5',
      lt: 'abc',
      lte: 1.5,
      between: ['a', 'b'],
      exists: undefined,
      not_exists: undefined,
      cidr: '2001:db8::/32',
    };
    for (const op of FILTER_OPS) {
      const raw = values[op] === undefined ? ['http.path', op] : ['http.path', op, values[op]];
      expect(() => parseFilter([raw]), op).not.toThrow();
    }
  });

  it('accepts unknown fields and field names with letters, digits and _ . - @', () => {
    expect(parseFilter([['k8s.pod-name_1@x', 'eq', 'a']])).toEqual(cond('k8s.pod-name_1@x', 'eq', 'a'));
    expect(parseFilter([['名前', 'eq', 'a']])).toEqual(cond('名前', 'eq', 'a'));
  });

  it('accepts kind-specific values', () => {
    expect(() => parseFilter([['status', 'gt', '500']])).not.toThrow();
    expect(() => parseFilter([['ts', 'gte', 1714557600]])).not.toThrow();
    expect(() => parseFilter([['ts', 'lt', '2024-05-01T10:00:00+02:00']])).not.toThrow();
    expect(() => parseFilter([['ts', 'between', ['2024-05-01', '2024-05-02']]])).not.toThrow();
    expect(() => parseFilter([['status', 'contains', '50']])).not.toThrow();
    expect(() => parseFilter([['src_ip', 'cidr', '10.0.0.0/8']])).not.toThrow();
    expect(() => parseFilter([['status', 'eq', 'not-a-number']])).not.toThrow();
  });
});

describe('parseFilter: validation errors name their path', () => {
  it.each<[string, unknown, string, RegExp]>([
    ['not an array', { field: 'a' }, 'filter', /must be an array/],
    ['an element that is neither', ['host'], 'filter[0]', /must be a condition/],
    ['null element', [null], 'filter[0]', /must be a condition/],
    ['unknown operator', [{ field: 'a', op: 'like', value: 'x' }], 'filter[0].op', /unknown operator "like"/],
    ['unknown operator, array form', [['a', 'equals', 'x']], 'filter[0][1]', /unknown operator "equals"/],
    ['operator not a string', [['a', 3, 'x']], 'filter[0][1]', /operator name/],
    ['missing operator', [{ field: 'a', value: 'x' }], 'filter[0].op', /operator name/],
    ['unknown group key', [{ some: [] }], 'filter[0].some', /unknown group key "some"/],
    [
      'unknown key in a condition',
      [{ field: 'a', op: 'eq', value: 1, extra: 1 }],
      'filter[0].extra',
      /unknown key/,
    ],
    ['two group keys', [{ any: [], all: [] }], 'filter[0]', /exactly one key/],
    ['empty object', [{}], 'filter[0]', /empty object/],
    ['array of the wrong length', [['a', 'eq', 'x', 'y']], 'filter[0]', /\[field, op, value\]/],
    ['empty field name', [['', 'eq', 'x']], 'filter[0][0]', /must not be empty/],
    ['field name too long', [['a'.repeat(257), 'eq', 'x']], 'filter[0][0]', /at most 256/],
    [
      'field name with bad characters',
      [{ field: 'a b', op: 'eq', value: 'x' }],
      'filter[0].field',
      /letters, digits/,
    ],
    ['field name not a string', [[5, 'eq', 'x']], 'filter[0][0]', /must be a string/],
    ['eq without value', [{ field: 'a', op: 'eq' }], 'filter[0].value', /required/],
    ['eq null', [['a', 'eq', null]], 'filter[0][2]', /use "exists"/],
    ['eq array', [['a', 'eq', ['x']]], 'filter[0][2]', /use "in"/],
    ['eq object', [['a', 'eq', { x: 1 }]], 'filter[0][2]', /string, number or boolean/],
    ['exists with a value', [['a', 'exists', 'x']], 'filter[0][2]', /takes no value/],
    ['in not an array', [['a', 'in', 'x']], 'filter[0][2]', /non-empty array/],
    ['in empty', [{ field: 'a', op: 'in', value: [] }], 'filter[0].value', /must not be empty/],
    [
      'in with a non-scalar',
      [{ field: 'a', op: 'not_in', value: ['x', {}] }],
      'filter[0].value[1]',
      /string, number/,
    ],
    ['in too long', [['a', 'in', Array.from({ length: 1001 }, (_, i) => i)]], 'filter[0][2]', /at most 1000/],
    ['between one bound', [['status', 'between', [1]]], 'filter[0][2]', /two bounds/],
    ['between mixed types', [['status', 'between', [1, '2']]], 'filter[0][2]', /two numbers or two strings/],
    [
      'between non-numeric on integer',
      [['status', 'between', ['1', 'x']]],
      'filter[0][2][1]',
      /integer field/,
    ],
    ['between bad time', [['ts', 'between', ['2024-01-01', 'soon']]], 'filter[0][2][1]', /time field/],
    [
      'gt non-numeric on integer',
      [{ field: 'status', op: 'gt', value: 'abc' }],
      'filter[0].value',
      /integer field/,
    ],
    ['gt bad time', [['received_at', 'lte', 'yesterday']], 'filter[0][2]', /Unix seconds or an ISO 8601/],
    ['gt boolean', [['host', 'gt', true]], 'filter[0][2]', /number or a string/],
    ['contains not a string', [['host', 'contains', 5]], 'filter[0][2]', /must be a string/],
    ['startswith on a time column', [['ts', 'startswith', '17']], 'filter[0][2]', /time field/],
    ['cidr invalid', [['src_ip', 'cidr', '10.0.0.0/33']], 'filter[0][2]', /CIDR/],
    ['cidr without prefix', [['src_ip', 'cidr', '10.0.0.1']], 'filter[0][2]', /CIDR/],
    [
      'cidr on an integer column',
      [['status', 'cidr', '10.0.0.0/8']],
      'filter[0][2]',
      /not an IP address field/,
    ],
    ['regex lookahead', [['host', 'regex', 'a(?=b)']], 'filter[0][2]', /lookaround/],
    ['regex negative lookahead', [['host', 'regex', 'a(?!b)']], 'filter[0][2]', /lookaround/],
    ['regex lookbehind', [['host', 'regex', '(?<=a)b']], 'filter[0][2]', /lookaround/],
    ['regex negative lookbehind', [['host', 'regex', '(?<!a)b']], 'filter[0][2]', /lookaround/],
    ['regex backreference', [['host', 'regex', '(a)\\1']], 'filter[0][2]', /backreferences/],
    ['regex named backreference', [['host', 'regex', '(?<x>a)\\k<x>']], 'filter[0][2]', /backreferences/],
    ['regex syntax error', [['host', 'regex', 'a(b']], 'filter[0][2]', /invalid regular expression/],
    ['regex huge repeat', [['host', 'regex', 'a{1001}']], 'filter[0][2]', /repeat counts/],
    ['any empty', [{ any: [] }], 'filter[0].any', /at least one/],
    ['any not an array', [{ any: ['a', 'eq', 'x'].join() }], 'filter[0].any', /array of conditions/],
    [
      'nested error',
      [['a', 'eq', 1], { any: [{ not: ['status', 'gt', 'x'] }] }],
      'filter[1].any[0].not[2]',
      /integer/,
    ],
  ])('%s', (_name, input, path, message) => {
    expectError(input, path, message);
  });

  it('accepts RE2 patterns that only look like forbidden ones', () => {
    expect(() => parseFilter([['host', 'regex', '\\\\1']])).not.toThrow();
    expect(() => parseFilter([['host', 'regex', '[(?=]']])).not.toThrow();
    expect(() => parseFilter([['host', 'regex', '(?i)abc(?s:.)']])).not.toThrow();
    expect(() => parseFilter([['host', 'regex', '(?P<name>x)\\pL\\x{41}']])).not.toThrow();
  });

  it('collects every problem, keyed by path, in one error', () => {
    let caught: unknown;
    try {
      parseFilter([['', 'bad', 1], ['status', 'in', []], { zz: 1, yy: 2 }, ['a', 'eq', 'ok']]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(FilterValidationError);
    expect(caught).toBeInstanceOf(AppError);
    const error = caught as FilterValidationError;
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid');
    expect(error.errors).toEqual({
      'filter[0][0]': ['must not be empty'],
      'filter[0][1]': [expect.stringMatching(/unknown operator "bad"/)],
      'filter[1][2]': ['must not be empty'],
      'filter[2].zz': [expect.stringMatching(/unknown group key/)],
      'filter[2].yy': [expect.stringMatching(/unknown group key/)],
    });
    expect(error.issues).toHaveLength(5);
    expect(error.message).toMatch(/^Invalid filter: filter\[0\]\[0\]: must not be empty \(and 4 more\)$/);
  });

  it('uses the path prefix it is given', () => {
    try {
      parseFilter([['a', 'nope', 1]], { path: 'params.filter' });
      expect.unreachable();
    } catch (error) {
      expect(Object.keys((error as FilterValidationError).errors)).toEqual(['params.filter[0][1]']);
    }
  });

  it('limits nesting depth', () => {
    expect(() => parseFilter([nest(14)])).not.toThrow();
    expectError([nest(15)], `filter[0]${'.all[0]'.repeat(15)}`, /nested more than 14 levels/);
  });

  it('limits the number of conditions, groups and list values', () => {
    const many = Array.from({ length: 1000 }, () => ['host', 'eq', 'a']);
    expect(() => parseFilter(many)).not.toThrow();
    expectError([...many, ['host', 'eq', 'b']], 'filter', /more than 1000/);
    expectError(
      [
        ['a', 'in', Array.from({ length: 600 }, (_, i) => i)],
        ['b', 'in', Array.from({ length: 600 }, (_, i) => i)],
      ],
      'filter',
      /more than 1000/,
    );
  });
});

describe('parseFilter: robustness', () => {
  const op = fc.constantFrom(...FILTER_OPS, 'like', '', 'EQ');
  const field = fc.oneof(fc.constantFrom('host', 'status', 'ts', 'src_ip', 'http.x', '', 'a b'), fc.string());
  const value = fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom('10.0.0.0/8', '(?=x)', '2024-01-01', [1, 2]),
  );
  const condition = fc.oneof(
    fc.tuple(field, op, value),
    fc.tuple(field, op),
    fc.record({ field, op, value }, { requiredKeys: [] }),
  );
  const tree = fc.letrec((tie) => ({
    node: fc.oneof({ maxDepth: 4 }, condition, tie('group'), fc.jsonValue({ maxDepth: 2 })),
    group: fc.oneof(
      fc.record({ any: fc.array(tie('node'), { maxLength: 3 }) }),
      fc.record({ all: fc.array(tie('node'), { maxLength: 3 }) }),
      fc.record({ not: tie('node') }),
    ),
  }));

  it('never throws anything but FilterValidationError, and returns frozen ASTs', () => {
    fc.assert(
      fc.property(fc.oneof(fc.array(tree.node, { maxLength: 4 }), fc.jsonValue()), (input) => {
        try {
          const ast = parseFilter(input);
          expect(Object.isFrozen(ast)).toBe(true);
        } catch (error) {
          if (!(error instanceof FilterValidationError)) throw error;
          expect(Object.keys(error.errors).length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 400 },
    );
  });
});
