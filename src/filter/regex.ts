/**
 * RE2 patterns (`regex` uses RE2 syntax and never backtracks). DuckDB and
 * ClickHouse evaluate regexes with RE2; in this process `re2js` (RE2's port to
 * JavaScript, no native code) does, so the JavaScript evaluator (trigger matching, live
 * tails) and `title__iregex` agree with the stores and every match runs in linear time:
 * no pattern can stall the server.
 */
import { RE2JS } from 're2js';

/** A compiled pattern: `test` is an unanchored search; `exec` as `RegExp.prototype.exec`. */
export type Regex = Pick<RE2JS, 'test' | 'exec'>;

/**
 * Escapes JavaScript knows and RE2 (so DuckDB and ClickHouse) refuses, said in the terms
 * of a JavaScript user.
 */
const JS_ONLY_ESCAPES: Readonly<Record<string, string>> = {
  u: '\\u (use \\x{...})',
  c: '\\c (control escapes)',
  C: '\\C (single bytes)',
};

/**
 * Unicode classes `re2js` knows and the stores' RE2 does not: binary properties, two
 * categories and the scripts of Unicode 16 and later. A pattern naming one would pass
 * validation and then fail in the store (test/event-store/duckdb-filter-compiler.test.ts
 * checks this list against DuckDB for every name `re2js` knows).
 */
const NOT_IN_STORES = new Set([
  ...['Cn', 'LC', 'ASCII_Hex_Digit', 'Alphabetic', 'Dash', 'Emoji', 'Emoji_Component'],
  ...['Emoji_Modifier', 'Emoji_Modifier_Base', 'Emoji_Presentation', 'Extended_Pictographic'],
  ...['Hex_Digit', 'Lowercase', 'Math', 'Quotation_Mark', 'Terminal_Punctuation', 'Uppercase'],
  ...['White_Space', 'Beria_Erfe', 'Garay', 'Gurung_Khema', 'Kirat_Rai', 'Ol_Onal', 'Sidetic'],
  ...['Sunuwar', 'Tai_Yo', 'Todhri', 'Tolong_Siki', 'Tulu_Tigalari', 'Unknown'],
]);

/**
 * What RE2 as the stores have it refuses but `re2js` takes, or what a JavaScript user
 * may write: JavaScript's `(?<name>` (RE2 of this age wants `(?P<name>`), escapes of
 * JavaScript only and Unicode classes the stores lack. Escapes, `\Q…\E` and
 * character classes are read as RE2 reads them, so text quoted is never mistaken for either.
 */
function storeProblem(pattern: string): string | undefined {
  let inClass = false;
  let named: string | undefined;
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch !== '\\') {
      if (inClass) {
        if (ch === ']') inClass = false;
        else if (ch === '[' && pattern[i + 1] === ':') i = Math.max(i, pattern.indexOf(':]', i + 2) + 1);
      } else if (ch === '[') {
        inClass = true;
        if (pattern[i + 1] === '^') i++;
        if (pattern[i + 1] === ']') i++;
      } else if (ch === '(' && pattern[i + 1] === '?' && pattern[i + 2] === '<') {
        if (pattern[i + 3] === '=' || pattern[i + 3] === '!') return LOOKAROUND;
        // Said unless something worse follows (a backreference to it).
        named = 'named groups are written (?P<name>...) in RE2, not (?<name>...)';
      }
      continue;
    }
    const next = pattern[i + 1];
    if (next === 'Q') {
      const end = pattern.indexOf('\\E', i + 2);
      if (end === -1) return named;
      i = end + 1;
      continue;
    }
    if (next === 'k') return 'named backreferences (\\k<...>) are not supported by RE2';
    if (next !== undefined && next >= '1' && next <= '9')
      return 'backreferences (\\1) are not supported by RE2';
    const jsOnly = JS_ONLY_ESCAPES[next ?? ''];
    if (jsOnly !== undefined) return `${jsOnly} is not supported by RE2`;
    if ((next === 'p' || next === 'P') && pattern[i + 2] === '{') {
      const close = pattern.indexOf('}', i + 3);
      const name = pattern.slice(i + 3, close === -1 ? undefined : close).replace(/^\^/, '');
      if (NOT_IN_STORES.has(name))
        return `the Unicode class \\p{${name}} is not supported by RE2; use a general category (\\pL, \\p{Lu}) or a script name (\\p{Greek})`;
    }
    i++;
  }
  return named;
}

const LOOKAROUND = 'lookaround ((?=, (?!, (?<=, (?<!) is not supported by RE2';

/** RE2's own messages, said in the terms a user of the query language knows. */
const FRIENDLY: ReadonlyArray<[RegExp, string]> = [
  [/unsupported Perl syntax: `\(\?<?[=!]/, LOOKAROUND],
  [/invalid repeat count/, 'repeat counts over 1000 are not supported by RE2'],
  [
    /invalid character class range: `\\[pP]\{/,
    'the Unicode property is not supported by RE2; use a general category (\\pL, \\p{Lu}) or a script name (\\p{Greek})',
  ],
];

function make(pattern: string, flags: number): Regex {
  const problem = storeProblem(pattern);
  if (problem !== undefined) throw new SyntaxError(problem);
  try {
    return RE2JS.compile(pattern, flags);
  } catch (error) {
    const message = (error instanceof Error ? error.message : '').replace(/^error parsing regexp: /, '');
    const friendly = FRIENDLY.find(([re]) => re.test(message))?.[1];
    throw new SyntaxError(friendly ?? `invalid regular expression: ${message}`);
  }
}

/** Why `pattern` is not accepted as an RE2 regex, or `undefined` when it is. */
export function checkRegex(pattern: string): string | undefined {
  try {
    make(pattern, 0);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * The compiled RE2 pattern: `test` is an unanchored search (RE2's partial match), as
 * DuckDB's `regexp_matches`. Throws for patterns `checkRegex` rejects.
 */
export function compileRegex(pattern: string, opts: { ignoreCase?: boolean } = {}): Regex {
  return make(pattern, opts.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
}

/** A group of a regex as `rewriteGroups` meets it: its number (capturing only) and name. */
export interface RegexGroup {
  /** 1-based among the capturing groups, left to right (RE2's numbering); 0 for `(?…)` groups. */
  readonly index: number;
  /** `(?P<name>…)` or `(?<name>…)`. */
  readonly name: string | null;
}

/**
 * `regex` with each group's opening rewritten by `open` (given the group, returns what
 * to write instead of `(`, `(?P<name>` or `(?<name>`; for a `(?:`/flag group, which has
 * index 0 and no name, return `undefined` to keep it). Escapes and character classes
 * (with a leading `]` as a literal) are copied as they are. The one walk behind grok's
 * named groups, `rex` and the extraction of one group.
 */
export function rewriteGroups(regex: string, open: (g: RegexGroup) => string | undefined): string {
  let out = '';
  let groups = 0;
  let inClass = false;
  for (let i = 0; i < regex.length; i++) {
    const ch = regex[i] as string;
    if (ch === '\\') {
      out += ch + (regex[i + 1] ?? '');
      i++;
    } else if (inClass) {
      if (ch === ']') inClass = false;
      out += ch;
    } else if (ch === '[') {
      inClass = true;
      out += ch;
      if (regex[i + 1] === '^') out += regex[++i];
      if (regex[i + 1] === ']') out += regex[++i];
    } else if (ch !== '(') {
      out += ch;
    } else {
      const named = /^\(\?P?<([A-Za-z_@][A-Za-z0-9_.@-]*)>/.exec(regex.slice(i, i + 300));
      if (named) {
        out += open({ index: ++groups, name: named[1] as string }) ?? named[0];
        i += named[0].length - 1;
      } else if (regex[i + 1] === '?') out += open({ index: 0, name: null }) ?? ch;
      else out += open({ index: ++groups, name: null }) ?? ch;
    }
  }
  return out;
}

/** `text` as a regex that matches it literally (every character with a meaning escaped). */
export const escapeRegex = (text: string): string => text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');

/** Characters with a meaning of their own outside a class; a backslash before one makes it literal. */
const SPECIAL = new Set('\\^$.|?*+()[]{}');
const QUANTIFIER = new Set('?*+{');

/**
 * The longest literal text (3+ characters) that every match of `pattern` contains, or
 * undefined when none is certain (`requiredLiterals`; no literal under flags).
 */
export function requiredLiteral(pattern: string): string | undefined {
  const found = requiredLiterals(pattern);
  if (!found || found.ignoreCase || found.flagged) return undefined;
  let best = '';
  for (const l of found.literals) if (l.length > best.length) best = l;
  return best.length >= 3 ? best : undefined;
}

/**
 * The literal texts every match of `pattern` contains, each as written (a match holds it
 * exactly, or with `ignoreCase` in some case variant of it), or undefined when the
 * pattern's shape is not understood. Conservative: only top-level runs of plain
 * characters count (nothing inside groups or classes, nothing a quantifier makes
 * optional), and no pattern with a top-level `|` or `\Q`. Flags are understood only as
 * one group at the very start (`(?is)…`: `flagged`; `i` makes `ignoreCase`); a flag group
 * anywhere else gives undefined. Runs are read by code point, so a quantifier after an
 * astral character never leaves half of it in a run.
 */
export function requiredLiterals(
  pattern: string,
): { literals: string[]; ignoreCase: boolean; flagged: boolean } | undefined {
  const lead = /^\(\?([imsU]+)\)/.exec(pattern);
  const body = lead ? pattern.slice(lead[0].length) : pattern;
  if (/\(\?(?!:|P?<)/.test(body)) return undefined;
  const literals: string[] = [];
  let run = '';
  let depth = 0;
  const end = () => {
    if (run !== '') literals.push(run);
    run = '';
  };
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (depth > 0) {
      if (ch === '\\') i++;
      else if (ch === '(') depth++;
      else if (ch === ')') depth--;
      else if (ch === '[') i = classEnd(body, i);
      continue;
    }
    let literal: string | undefined;
    if (ch === '\\') {
      const next = body[i + 1] ?? '';
      if (next === 'Q') return undefined;
      if (SPECIAL.has(next) || next === '/' || next === '-' || next === ' ') literal = next;
      i = escapeEnd(body, i);
    } else if (ch === '|') {
      return undefined;
    } else if (!SPECIAL.has(ch)) {
      // A whole code point: a surrogate pair is one character to a quantifier.
      const cp = body.codePointAt(i) as number;
      literal = String.fromCodePoint(cp);
      i += literal.length - 1;
    } else if (ch === '(') {
      depth = 1;
    } else if (ch === '[') {
      i = classEnd(body, i);
    }
    if (literal === undefined) {
      end();
      continue;
    }
    // A quantified character is optional or repeated: it ends the run without joining it.
    if (QUANTIFIER.has(body[i + 1] ?? '')) {
      end();
      continue;
    }
    run += literal;
  }
  end();
  if (depth !== 0) return undefined;
  return { literals, ignoreCase: lead?.[1]?.includes('i') ?? false, flagged: lead !== null };
}

/**
 * Index of the last character of the escape starting at `start` (a backslash): its
 * arguments belong to it (`\x41`, `\x{1F600}`, `\pL`, `\p{Greek}`, octal `\101`), so
 * they are never read as literal text.
 */
function escapeEnd(pattern: string, start: number): number {
  const next = pattern[start + 1] ?? '';
  const braced = () => {
    const close = pattern.indexOf('}', start + 2);
    return close === -1 ? pattern.length : close;
  };
  if (next === 'x') return pattern[start + 2] === '{' ? braced() : start + 3;
  if (next === 'p' || next === 'P') return pattern[start + 2] === '{' ? braced() : start + 2;
  if (/[0-7]/.test(next)) {
    let i = start + 1;
    while (i < start + 3 && /[0-7]/.test(pattern[i + 1] ?? '')) i++;
    return i;
  }
  return start + 1;
}

/** Index of the `]` closing the class opened at `start` (RE2 rules: a leading `]` is literal). */
function classEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '^') i++;
  if (pattern[i] === ']') i++;
  for (; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === '[' && pattern[i + 1] === ':') {
      const close = pattern.indexOf(':]', i + 2);
      if (close !== -1) i = close + 1;
    } else if (pattern[i] === ']') return i;
  }
  return pattern.length;
}
