/**
 * RE2 patterns (API.md §3: `regex` uses RE2 syntax and never backtracks). DuckDB and
 * ClickHouse evaluate regexes with RE2; in this process the `re2` binding does, so the
 * JavaScript evaluator (trigger matching, live tails) and `title__iregex` agree with the
 * stores and every match runs in linear time: no pattern can stall the server.
 */
import RE2 from 're2';

/**
 * Escapes the binding translates from JavaScript syntax but RE2 itself (so DuckDB and
 * ClickHouse) refuses: accepting them here would let a pattern pass validation and then
 * fail in the store.
 */
const JS_ONLY_ESCAPES: Readonly<Record<string, string>> = {
  u: '\\u (use \\x{...})',
  c: '\\c (control escapes)',
  C: '\\C (single bytes)',
};

function jsOnlyEscape(pattern: string): string | undefined {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== '\\') continue;
    const what = JS_ONLY_ESCAPES[pattern[i + 1] ?? ''];
    if (what !== undefined) return `${what} is not supported by RE2`;
    i++;
  }
  return undefined;
}

/**
 * `\Q...\E` spelled as escaped characters: the binding rewrites `/` to `\/` inside
 * the quote, where RE2 would then match the backslash literally.
 */
const expandQuotes = (pattern: string): string =>
  pattern.replace(/\\Q([\s\S]*?)(?:\\E|$)/g, (_m, literal: string) =>
    literal.replace(/[^\p{L}\p{N}_\s]/gu, (c) => `\\${c}`),
  );

/** RE2's own messages, said in the terms a user of the query language knows. */
const FRIENDLY: ReadonlyArray<[RegExp, string]> = [
  [/invalid perl operator: \(\?<?[=!]/, 'lookaround ((?=, (?!, (?<=, (?<!) is not supported by RE2'],
  [/invalid escape sequence: \\[1-9]/, 'backreferences (\\1) are not supported by RE2'],
  [/invalid escape sequence: \\k/, 'named backreferences (\\k<...>) are not supported by RE2'],
  [/invalid repetition size/, 'repeat counts over 1000 are not supported by RE2'],
];

function make(pattern: string, flags: string): RE2 {
  const problem = jsOnlyEscape(pattern);
  if (problem !== undefined) throw new SyntaxError(problem);
  try {
    return new RE2(expandQuotes(pattern), flags);
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    const friendly = FRIENDLY.find(([re]) => re.test(message))?.[1];
    throw new SyntaxError(friendly ?? `invalid regular expression: ${message}`);
  }
}

/** Why `pattern` is not accepted as an RE2 regex, or `undefined` when it is. */
export function checkRegex(pattern: string): string | undefined {
  try {
    make(pattern, 'u');
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * The compiled RE2 pattern: `test` is an unanchored search (RE2's partial match), as
 * DuckDB's `regexp_matches`. Throws for patterns `checkRegex` rejects.
 */
export function compileRegex(pattern: string, opts: { ignoreCase?: boolean } = {}): RE2 {
  return make(pattern, opts.ignoreCase ? 'iu' : 'u');
}
