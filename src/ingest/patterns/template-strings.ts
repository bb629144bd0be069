import { hash } from 'node:crypto';

/**
 * The strings a template holds (template-miner.ts): its id, made from what it was made of,
 * and its words, one copy of each shared by every template that holds it.
 */

/**
 * A template's id: from its app and the tokens it was created with, so the same first
 * message gives the same id on every node and after every restart; 14 characters of
 * letters and digits.
 */
export function templateId(app: string, tokens: readonly string[]): string {
  // The one-shot hash of the same bytes (UTF-8, as `update` reads strings; the NUL pairs with
  // no surrogate): no Hash object made and fed three times for each template made.
  return hash('sha256', `${app}\u0000${tokens.join(' ')}`, 'base64url')
    .replace(/[-_]/g, '')
    .slice(0, 14);
}

/**
 * Words lately interned, each in the slot its hash falls in: the templates one makes share
 * most of their words (of the Loghub samples' 7,800, a third are new), and the string table
 * costs up to 1 µs a word where this costs a hash. A fixed size, of words no longer than
 * `INTERNED_LENGTH`.
 */
const INTERNED_SLOTS = 4096;
const INTERNED_LENGTH = 64;
const interned: string[] = new Array<string>(INTERNED_SLOTS).fill('');

/** `internNow(s)`, from `interned` when it was interned lately. */
export function intern(s: string): string {
  const n = s.length;
  if (n > INTERNED_LENGTH) return internNow(s);
  // A hash of its length and a few characters: a line of binary garbage makes a template of
  // 64 long tokens, each read in full below only when it is the one held.
  let h = Math.imul(n ^ (s.charCodeAt(0) << 8), 0x9e3779b1) ^ s.charCodeAt(n >> 1);
  h = Math.imul(h ^ (s.charCodeAt(n - 1) << 16), 0x85ebca6b) ^ s.charCodeAt(1);
  const slot = (h ^ (h >>> 15)) & (INTERNED_SLOTS - 1);
  const held = interned[slot] as string;
  if (held === s) return held;
  const copy = internNow(s);
  interned[slot] = copy;
  return copy;
}

/**
 * The one copy of a string that V8 keeps for it as a property name (its string table,
 * which lets go of strings nothing else holds). A template's tokens were each cut from
 * their message: 100,000 templates of common words held 71 MiB, interned 51.
 */
function internNow(s: string): string {
  const o: Record<string, 0> = { [s]: 0 };
  for (const k in o) return k;
  return s;
}
