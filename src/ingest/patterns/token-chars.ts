/**
 * A message's characters as the template miner's tokenizer (template-tokens.ts) reads them:
 * cut into tokens at whitespace, each with the kinds of character it holds, in one pass.
 */

/** Characters a token holds, as bits (`charsOf`): what a form cannot match without. */
export const DIGIT = 1;
export const DOT = 2;
export const SLASH = 4;
export const AT = 8;
export const COLON = 16;
export const BACKSLASH = 32;

/** The bits of the characters `token` holds, in one pass (most tokens are short). */
export function charsOf(token: string): number {
  let bits = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c >= 48 && c <= 57) bits |= DIGIT;
    // Letters, the commonest, are nothing a form needs.
    else if ((c | 32) >= 97 && (c | 32) <= 122) continue;
    else if (c === 46) bits |= DOT;
    else if (c === 47) bits |= SLASH;
    else if (c === 64) bits |= AT;
    else if (c === 58) bits |= COLON;
    else if (c === 92) bits |= BACKSLASH;
  }
  return bits;
}

/**
 * A message's tokens as `split(/\s+/)` cuts them, and what each holds (`charsOf`'s bits),
 * both read in one pass over its characters (a split, then a pass per token, read each
 * character twice and made two arrays a message); reused message after message (`cut`
 * tells how many are this message's; `tokenize` lets go of a long line's).
 */
export const raw: string[] = [];
export const bits: number[] = [];

/** Whitespace beyond ASCII as `\s` has it (no-break, ideographic, line separators, BOM…). */
const isWideSpace = (c: number) =>
  c === 0xa0 ||
  c === 0x1680 ||
  (c >= 0x2000 && c <= 0x200a) ||
  c === 0x2028 ||
  c === 0x2029 ||
  c === 0x202f ||
  c === 0x205f ||
  c === 0x3000 ||
  c === 0xfeff;

/**
 * Cuts `text` into `raw` and `bits` as `text.split(/\s+/)` and `charsOf` would (an empty
 * token first or last when it starts or ends with spaces); answers how many tokens.
 */
export function cut(text: string): number {
  let n = 0;
  let start = 0;
  let held = 0;
  let inSpace = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 32 && c < 127) {
      if (inSpace) {
        inSpace = false;
        start = i;
      }
      // Letters, the commonest, and the rest from `A` on but `\` are nothing a form needs.
      if (c >= 65 && c !== 92) continue;
      if (c >= 48 && c <= 57) held |= DIGIT;
      else if (c === 46) held |= DOT;
      else if (c === 47) held |= SLASH;
      else if (c === 64) held |= AT;
      else if (c === 58) held |= COLON;
      else if (c === 92) held |= BACKSLASH;
    } else if (c === 32 || (c >= 9 && c <= 13) || (c >= 0xa0 && isWideSpace(c))) {
      if (!inSpace) {
        raw[n] = text.slice(start, i);
        bits[n++] = held;
        held = 0;
        inSpace = true;
      }
    } else if (inSpace) {
      inSpace = false;
      start = i;
    }
  }
  raw[n] = inSpace ? '' : text.slice(start);
  bits[n++] = held;
  return n;
}

/** The bits of the message's token at `i` of `n` (none beyond either end). */
export const bitsAt = (n: number, i: number) => (i >= 0 && i < n ? (bits[i] as number) : 0);
/** The message's token at `i` of `n`, undefined beyond either end. */
export const rawAt = (n: number, i: number) => (i >= 0 && i < n ? raw[i] : undefined);
