/**
 * RE2 patterns (`regex` uses RE2 syntax and never backtracks). DuckDB and
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
function expandQuotes(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const next = pattern[i + 1];
    if (next !== 'Q') {
      // An escape (`\\` included) is copied whole: its second character starts nothing.
      out += ch + (next ?? '');
      i++;
      continue;
    }
    const end = pattern.indexOf('\\E', i + 2);
    const literal = pattern.slice(i + 2, end === -1 ? pattern.length : end);
    out += literal.replace(/[^\p{L}\p{N}_\s]/gu, (c) => `\\${c}`);
    i = end === -1 ? pattern.length : end + 1;
  }
  return out;
}

/** RE2's own messages, said in the terms a user of the query language knows. */
const FRIENDLY: ReadonlyArray<[RegExp, string]> = [
  [/invalid perl operator: \(\?<?[=!]/, 'lookaround ((?=, (?!, (?<=, (?<!) is not supported by RE2'],
  [/invalid escape sequence: \\[1-9]/, 'backreferences (\\1) are not supported by RE2'],
  [/invalid escape sequence: \\k/, 'named backreferences (\\k<...>) are not supported by RE2'],
  [/invalid repetition size/, 'repeat counts over 1000 are not supported by RE2'],
];

/**
 * What the binding hands RE2 for a pattern in RE2's own syntax: the same text with each
 * unescaped `/` escaped and `\p{L}` shortened to `\pL` (no-ops for RE2), `(?:)` for the
 * empty pattern.
 */
function untranslated(pattern: string): string {
  if (pattern === '') return '(?:)';
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) {
      const next = pattern[i + 1]!;
      const short = (next === 'p' || next === 'P') && /^\{[^}]\}/u.exec(pattern.slice(i + 2));
      if (short) {
        out += `\\${next}${[...short[0]][1]}`;
        i += 1 + short[0].length;
      } else {
        out += ch + next;
        i++;
      }
    } else out += ch === '/' ? '\\/' : ch;
  }
  return out;
}

/**
 * Why the binding's translation from JavaScript syntax changed `pattern`: it then means
 * something RE2 itself (so DuckDB and ClickHouse) would refuse or read differently.
 */
function translationProblem(pattern: string): string {
  if (/\(\?<(?![=!])/.test(pattern)) return 'named groups are written (?P<name>...) in RE2, not (?<name>...)';
  const property = /\\[pP]\{([^}]*)\}/.exec(pattern);
  if (property) {
    return `the Unicode property \\p{${property[1]}} is not supported by RE2; use a general category (\\pL, \\p{Lu}) or a script name (\\p{Greek})`;
  }
  return 'JavaScript-only regex syntax is not supported by RE2';
}

function make(pattern: string, flags: string): RE2 {
  const problem = jsOnlyEscape(pattern);
  if (problem !== undefined) throw new SyntaxError(problem);
  const source = expandQuotes(pattern);
  let re: RE2;
  try {
    re = new RE2(source, flags);
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    const friendly = FRIENDLY.find(([re]) => re.test(message))?.[1];
    // A Unicode property RE2 lacks (`\p{Emoji}`): say what RE2 offers instead.
    const property = /invalid character class range/.test(message) && /\\[pP]\{/.test(pattern);
    throw new SyntaxError(
      friendly ?? (property ? translationProblem(pattern) : `invalid regular expression: ${message}`),
    );
  }
  // The binding accepts some JavaScript syntax by rewriting it (`(?<name>`, `\p{Letter}`,
  // `\p{Script=Greek}`, `\p{Emoji}`); the stores' RE2 gets the pattern as written.
  // (`internalSource` is a property of the binding its 1.22 typings do not declare.)
  if ((re as RE2 & { internalSource: string }).internalSource !== untranslated(source))
    throw new SyntaxError(translationProblem(pattern));
  return re;
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
