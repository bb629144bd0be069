/**
 * Where a query goes wrong and how that is told: positions the way Peggy counts them, the
 * error the grammar's helpers throw (turned into a QuerySyntaxError by parse-query.ts),
 * and the wording of the generated parser's "expected … but found …".
 */
import type peggy from 'peggy';
import type * as parser from './query-parser.generated.js';

export interface Position {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
}

export interface Location {
  readonly start: Position;
}

/** Line and column the way Peggy counts them (only `\n` starts a line). */
export function positionOf(input: string, offset: number): Position {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < input.length; i++) {
    if (input.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { offset, line, column: offset - lineStart + 1 };
}

export const describePosition = (p: Position) => `position ${p.offset} (line ${p.line}, column ${p.column})`;

/** Thrown by the grammar helpers; turned into a QuerySyntaxError carrying the path. */
export class ValueError extends Error {
  constructor(
    message: string,
    readonly at: Position,
    readonly kind = 'Invalid value',
  ) {
    super(message);
  }
}

/** A problem in a pipe found while parsing (its offset; line and column are added later). */
export const pipeError = (message: string, loc: Location) =>
  new ValueError(message, loc.start, 'Invalid pipe');

// Expectations that all mean "a new term could start here", and "a value could start here".
const TERM_STARTS = new Set([
  '"("',
  '"-"',
  '"+"',
  'NOT',
  '"*:*"',
  '"_exists_:"',
  'field name',
  '"/"',
  '"\\""',
  '"\\\\"',
  '"*"',
  'word',
]);
const VALUE_STARTS = new Set([
  '"("',
  '"-"',
  '"+"',
  'NOT',
  'range',
  '">="',
  '"<="',
  '">"',
  '"<"',
  '"/"',
  '"\\""',
  '"\\\\"',
  '"*"',
  'value',
]);

function describeExpectation(e: peggy.parser.Expectation): string {
  switch (e.type) {
    case 'literal':
      return /^[A-Z]+$/.test(e.text) ? e.text : JSON.stringify(e.text);
    case 'class':
      return 'character';
    case 'any':
      return 'character';
    case 'end':
      return 'end of input';
    case 'other':
      return e.description;
    default:
      return e satisfies never;
  }
}

function describeExpected(expected: readonly peggy.parser.Expectation[]): string {
  let names = new Set(expected.map(describeExpectation));
  const collapse = (group: Set<string>, markers: readonly string[], label: string) => {
    if (!markers.some((m) => names.has(m))) return;
    names = new Set([...names].filter((n) => !group.has(n)));
    names.add(label);
  };
  // Markers: expectations that arise only where a whole term (or value) may start.
  collapse(TERM_STARTS, ['word', 'field name', '"_exists_:"', '"*:*"'], 'a search term');
  collapse(VALUE_STARTS, ['value', 'range', '">="', '"-"'], 'a value');
  // Whitespace, any character and backslash escapes are possible almost anywhere: noise.
  for (const noise of ['whitespace', 'character', '"\\\\"', '"\\\\/"'])
    if (names.size > 1) names.delete(noise);
  const list = [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  if (list.length <= 1) return list[0] ?? 'something else';
  return `${list.slice(0, -1).join(', ')} or ${list[list.length - 1]}`;
}

const rank = (name: string) => (name === 'end of input' ? 2 : name.startsWith('a ') ? 1 : 0);

export function syntaxError(input: string, error: InstanceType<typeof parser.SyntaxError>): ValueError {
  const at = positionOf(input, error.location.start.offset);
  const found = error.found === null ? 'end of input' : JSON.stringify(error.found);
  const message = error.expected
    ? `expected ${describeExpected(error.expected)} but found ${found}`
    : error.message;
  return new ValueError(message, at);
}
