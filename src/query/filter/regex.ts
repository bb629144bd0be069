/**
 * RE2 patterns without an RE2 binding. Filters promise RE2 syntax (API.md §3) because
 * DuckDB and ClickHouse use RE2; no RE2 binding is loaded in this process yet, so:
 *
 * - validation is conservative: it rejects what RE2 does not support (lookaround,
 *   backreferences, atomic groups, conditionals, repeat counts over 1000) and what this
 *   approximation cannot reproduce (`(?U)`, negated POSIX classes, `\C`), then requires
 *   the translated pattern to compile as a JavaScript RegExp. Some valid RE2 patterns
 *   are therefore refused; no refused-by-RE2 pattern should pass.
 * - matching (the JS evaluator) uses the translated JavaScript RegExp: RE2 flag groups
 *   `(?i)` `(?s)` `(?m)` become flags of the whole pattern, `(?P<n>` becomes `(?<n>`,
 *   `\A` / `\z`, `\pL`, `\x{..}`, `\Q..\E` and POSIX classes are rewritten. The
 *   trigger-matching work swaps this for a real RE2 binding (linear time, exact).
 */

const MAX_REPEAT = 1000;

const POSIX_CLASSES: Readonly<Record<string, string>> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

const JS_SYNTAX = /[\\^$.*+?()[\]{}|/]/;

interface Translation {
  readonly source: string;
  readonly flags: string;
  /** The pattern uses something only the `u` flag understands (`\p{..}`, `\u{..}`). */
  readonly needsUnicode: boolean;
}

class Unsupported extends Error {}

function translate(pattern: string): Translation {
  let out = '';
  const flags = new Set<string>();
  let needsUnicode = false;
  let inClass = false;
  let classBodyStart = -1;
  let i = 0;
  while (i < pattern.length) {
    const ch = pattern[i]!;
    if (ch === '\\') {
      const next = pattern[i + 1];
      if (next === undefined) throw new Unsupported('the pattern ends with a lone backslash');
      if (next >= '1' && next <= '9') {
        throw new Unsupported(`backreferences (\\${next}) are not supported by RE2`);
      }
      switch (next) {
        case 'k':
          throw new Unsupported('named backreferences (\\k<...>) are not supported by RE2');
        case 'Z':
        case 'C':
        case 'u':
        case 'c':
          throw new Unsupported(`\\${next} is not supported by RE2 here`);
        case 'A':
          if (inClass) throw new Unsupported('\\A is not allowed inside a character class');
          out += '(?<![\\s\\S])';
          i += 2;
          continue;
        case 'z':
          if (inClass) throw new Unsupported('\\z is not allowed inside a character class');
          out += '(?![\\s\\S])';
          i += 2;
          continue;
        case 'Q': {
          const end = pattern.indexOf('\\E', i + 2);
          const literal = pattern.slice(i + 2, end === -1 ? undefined : end);
          out += Array.from(literal, (c) => (JS_SYNTAX.test(c) ? `\\${c}` : c)).join('');
          i = end === -1 ? pattern.length : end + 2;
          continue;
        }
        case 'p':
        case 'P': {
          needsUnicode = true;
          const name = pattern[i + 2];
          if (name !== undefined && name !== '{') {
            out += `\\${next}{${name}}`;
            i += 3;
            continue;
          }
          break;
        }
        case 'x':
          if (pattern[i + 2] === '{') {
            const end = pattern.indexOf('}', i + 3);
            if (end === -1) throw new Unsupported('unterminated \\x{...} escape');
            out += `\\u{${pattern.slice(i + 3, end)}}`;
            needsUnicode = true;
            i = end + 1;
            continue;
          }
          break;
      }
      out += ch + next;
      i += 2;
      continue;
    }
    if (inClass) {
      if (ch === '[' && pattern[i + 1] === ':') {
        const end = pattern.indexOf(':]', i + 2);
        const name = end === -1 ? undefined : pattern.slice(i + 2, end);
        if (name === undefined) {
          out += '\\[';
          i++;
          continue;
        }
        if (name.startsWith('^')) throw new Unsupported('negated POSIX classes are not supported here');
        const ranges = POSIX_CLASSES[name];
        if (ranges === undefined || !Object.hasOwn(POSIX_CLASSES, name)) {
          throw new Unsupported(`unknown POSIX class [:${name}:]`);
        }
        out += ranges;
        i = end + 2;
        continue;
      }
      // RE2 (like POSIX) reads a `]` right after `[` or `[^` as a literal; JavaScript
      // would read `[]` as an empty class.
      if (ch === ']' && i !== classBodyStart) inClass = false;
      out += ch === ']' && i === classBodyStart ? '\\]' : ch === '[' ? '\\[' : ch;
      i++;
      continue;
    }
    if (ch === '[') {
      inClass = true;
      classBodyStart = pattern[i + 1] === '^' ? i + 2 : i + 1;
      out += pattern[i + 1] === '^' ? '[^' : '[';
      i = classBodyStart;
      continue;
    }
    if (ch === '{') {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(pattern.slice(i));
      if (m && (Number(m[1]) > MAX_REPEAT || Number(m[2] ?? 0) > MAX_REPEAT)) {
        throw new Unsupported(`repeat counts above ${MAX_REPEAT} are not supported by RE2`);
      }
    }
    if (ch === '(' && pattern[i + 1] === '?') {
      const rest = pattern.slice(i + 2);
      if (/^(?:=|!|<=|<!)/.test(rest))
        throw new Unsupported('lookaround ((?=, (?!, (?<=, (?<!) is not supported by RE2');
      if (rest.startsWith('P<')) {
        out += '(?<';
        i += 4;
        continue;
      }
      if (rest.startsWith(':') || /^<[A-Za-z_]/.test(rest)) {
        out += '(?';
        i += 2;
        continue;
      }
      const flagGroup = /^([A-Za-z-]*)([):])/.exec(rest);
      if (flagGroup && flagGroup[1] !== '') {
        const [whole, letters = '', close] = flagGroup;
        const [on = '', off = ''] = letters.split('-');
        if (!/^[imsU]*$/.test(on + off) || letters.split('-').length > 2) {
          throw new Unsupported(`unknown flag group (?${letters}${close})`);
        }
        if ((on + off).includes('U')) throw new Unsupported('the (?U) flag is not supported here');
        // JavaScript has no inline flags: apply them to the whole pattern (an approximation).
        for (const f of on) flags.add(f);
        out += close === ':' ? '(?:' : '';
        i += 2 + whole.length;
        continue;
      }
      throw new Unsupported(`unsupported group syntax (?${rest.slice(0, 2)}`);
    }
    out += ch;
    i++;
  }
  return { source: out, flags: [...flags].sort().join(''), needsUnicode };
}

function compile(pattern: string): RegExp {
  const t = translate(pattern);
  try {
    return new RegExp(t.source, `${t.flags}u`);
  } catch (error) {
    if (t.needsUnicode) throw error;
    // Without `u`, JavaScript accepts escapes of any punctuation, as RE2 does.
    return new RegExp(t.source, t.flags);
  }
}

/** Why `pattern` is not accepted as an RE2 regex, or `undefined` when it is. */
export function checkRegex(pattern: string): string | undefined {
  try {
    compile(pattern);
    return undefined;
  } catch (error) {
    if (error instanceof Unsupported) return error.message;
    const detail = error instanceof Error ? error.message.replace(/^Invalid regular expression: /, '') : '';
    return `invalid regular expression${detail ? `: ${detail}` : ''}`;
  }
}

/**
 * A JavaScript RegExp that approximates the RE2 pattern (unanchored search, like RE2's
 * partial match). Throws for patterns `checkRegex` rejects.
 */
export function compileRegex(pattern: string): RegExp {
  return compile(pattern);
}
