import { WILDCARD } from './template-tokens.js';

/**
 * How the template miner (template-miner.ts) compares a message's tokens with a template's:
 * what a constant weighs, which two tokens no variable makes alike, what a word is.
 */

/**
 * A word as a sentence writes it: letters, maybe quoted or followed by punctuation
 * (`'Active'`, `SPP.`), as `^[("'[]*[A-Za-z]+[)"'\],;:.!?]*$` reads it; by character codes,
 * as it is asked of most tokens of every message compared.
 */
export function isBareWord(t: string): boolean {
  let i = 0;
  let c = t.charCodeAt(0);
  // `(`, `"`, `'`, `[` before.
  while (c === 40 || c === 34 || c === 39 || c === 91) c = t.charCodeAt(++i);
  const letters = i;
  while ((c | 32) >= 97 && (c | 32) <= 122) c = t.charCodeAt(++i);
  if (i === letters) return false;
  // `)`, `"`, `'`, `]`, `,`, `;`, `:`, `.`, `!`, `?` after.
  for (; i < t.length; c = t.charCodeAt(++i))
    if (
      !(
        c === 41 ||
        c === 34 ||
        c === 39 ||
        c === 93 ||
        c === 44 ||
        c === 59 ||
        c === 58 ||
        c === 46 ||
        c === 33 ||
        c === 63
      )
    )
      return false;
  return true;
}

/** How much a constant token says about a message: words (letters only) most, values least. */
export function weight(token: string): number {
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i) | 32;
    if (c < 97 || c > 122) return 1;
  }
  return token.length > 0 ? 2 : 1;
}

/**
 * Two tokens at one position that no variable can make alike: the same masked value in
 * another frame (`(uid=<*>)`, `LOGIN(uid=<*>)`), or a key without a value and the same
 * key with one (`rhost=` and `rhost=<*>`: a value absent is a form of its own, not one
 * more value). Only a position whose tokens are plain words or values becomes a
 * variable: a value in a frame beside a whole value (`cache_<*>_part0`, `<*>`) is one.
 */
export function differsInKind(a: string, b: string): boolean {
  if (a.includes(WILDCARD) && b.includes(WILDCARD)) return a !== WILDCARD && b !== WILDCARD;
  const emptyA = a.endsWith('=');
  if (emptyA === b.endsWith('=')) return false;
  return emptyA ? b.startsWith(a) : a.startsWith(b);
}

/** The one position where two templates' tokens differ, both words there; else -1. */
export function oneWordApart(a: readonly string[], b: readonly string[]): number {
  if (a.length !== b.length) return -1;
  let at = -1;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    if (at >= 0 || !isBareWord(a[i] as string) || !isBareWord(b[i] as string)) return -1;
    at = i;
  }
  return at;
}

/** `key=<*>` when both tokens hold a value after the same `key=`, else undefined. */
export function keyedValue(a: string, b: string): string | undefined {
  const eq = a.indexOf('=');
  if (eq <= 0 || eq === a.length - 1 || b.length <= eq + 1 || b.charCodeAt(eq) !== 61) return undefined;
  return a.startsWith(b.slice(0, eq)) ? `${a.slice(0, eq + 1)}${WILDCARD}` : undefined;
}
