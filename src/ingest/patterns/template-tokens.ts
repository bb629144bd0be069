import {
  AT,
  BACKSLASH,
  bits,
  bitsAt,
  COLON,
  charsOf,
  cut,
  DIGIT,
  DOT,
  raw,
  rawAt,
  SLASH,
} from './token-chars.js';

/**
 * A message as the template miner compares it (template-miner.ts): its tokens, each one
 * that is a variable by its form masked as `<*>`, with the values pipelines extracted
 * masked too, and the line capped so that a huge one costs what a long ordinary one does.
 */

export const MAX_TOKENS = 64;
export const MAX_CHARS = 4096;
export const WILDCARD = '<*>';

const NUMBER = /^[-+]?\d+(?:[.,]\d+)*[a-zA-Z%]{0,3}$/;
const HEX = /^(?=[a-fA-F]*\d)[0-9a-fA-F]{8,}$/;
const HEX_0X = /^0x[0-9a-fA-F]+$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const MAC = /^[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}$/;
const URL_FORM = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/\S+$/;
const URL_INSIDE = /^[^A-Za-z0-9]*[a-zA-Z][a-zA-Z0-9+.-]*:\/\/\S+$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[a-zA-Z]{2,}$/;
const PATH = /^(?:[~.]?\/[^/\s]*){2,}$|^\/[^\s/]+$|^[A-Za-z]:\\/;
const FQDN = /^[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+){2,}\.?(?::\d+)?$/;
const isDigit = (c: number) => c >= 48 && c <= 57;
/**
 * A host's name and a port: a name of letters, digits, dots and hyphens with one of the last
 * three in it (`msra-sa-41`, `db.local`; `memory:1024` is a key and its value), then 2-5 digits.
 */
const HOST_PORT = /^(?=[^:]*[\d.-])[A-Za-z0-9][A-Za-z0-9.-]*:\d{2,5}$/;
/** A file's name with its extension (`chrome.exe`, `report.csv`, `Session.java:`): a value, as a path is. */
const FILE_NAME = /^[A-Za-z0-9_-][\w-]*\.[A-Za-z][A-Za-z0-9]{0,3}$/;

/**
 * Whether a whole token is a variable by its form. Each form is tried only when the token
 * holds what it cannot match without (a length, a character: `chars`), so most tokens are
 * refused before any regex runs.
 */
function isVariableForm(t: string, chars: number): boolean {
  // numbers, signed, with decimals or a unit suffix of letters (12ms, 1.5s, 64KB)
  if ((isDigit(t.charCodeAt(0)) || isDigit(t.charCodeAt(1))) && NUMBER.test(t)) return true;
  // hex ids and hashes (with a digit: `deadbeef` alone is a word)
  if ((chars & DIGIT) !== 0 && t.length >= 8 && HEX.test(t)) return true;
  if (t.startsWith('0x') && HEX_0X.test(t)) return true;
  if (t.length === 36 && UUID.test(t)) return true;
  if ((chars & COLON) !== 0 && t.length === 17 && MAC.test(t)) return true;
  // URLs and e-mail addresses
  if ((chars & COLON) !== 0 && (chars & SLASH) !== 0 && t.includes('://') && URL_FORM.test(t)) return true;
  // a URL inside other punctuation (`:[akka.tcp://system@host:2552]`)
  if ((chars & COLON) !== 0 && (chars & SLASH) !== 0 && URL_INSIDE.test(t)) return true;
  if ((chars & AT) !== 0 && EMAIL.test(t)) return true;
  // paths: /a/b, ./a, ~/a, /a, C:\a
  if (((chars & SLASH) !== 0 || ((chars & BACKSLASH) !== 0 && t.includes(':\\'))) && PATH.test(t))
    return true;
  // paths wherever they start (`{id}ROOT/dir/file`, `\\?\VOLUME\dir\file`): three segments or more
  if (
    ((chars & SLASH) !== 0 && separators(t, 47) >= 2) ||
    ((chars & BACKSLASH) !== 0 && separators(t, 92) >= 2)
  )
    return true;
  // a host and its port (`msra-sa-41:9000`, `db.local:5432`)
  if ((chars & COLON) !== 0 && (chars & DIGIT) !== 0 && HOST_PORT.test(t)) return true;
  // fully qualified host names (three labels or more), with a port or not
  if ((chars & DOT) === 0) return false;
  return FQDN.test(t) || FILE_NAME.test(t);
}

/** How many times the character `code` separates two non-empty parts of `t`. */
function separators(t: string, code: number): number {
  let n = 0;
  for (let i = 1; i < t.length - 1; i++)
    if (t.charCodeAt(i) === code && t.charCodeAt(i - 1) !== code && t.charCodeAt(i + 1) !== code) n++;
  return n;
}

/** Booleans are values of a flag, whatever the case (`true`, `False`): two words that vary. */
function isBoolean(t: string): boolean {
  // Letters by code, any case (`| 32`): no lower-cased copy of each four- or five-letter word.
  const c = t.charCodeAt(0) | 32;
  if (t.length === 4)
    return (
      c === 116 &&
      (t.charCodeAt(1) | 32) === 114 &&
      (t.charCodeAt(2) | 32) === 117 &&
      (t.charCodeAt(3) | 32) === 101
    );
  return (
    t.length === 5 &&
    c === 102 &&
    (t.charCodeAt(1) | 32) === 97 &&
    (t.charCodeAt(2) | 32) === 108 &&
    (t.charCodeAt(3) | 32) === 115 &&
    (t.charCodeAt(4) | 32) === 101
  );
}
/**
 * Values inside a token: IPv4 (with a port), times, hex runs with a digit, numbers with
 * their sign (`blk_-42` and `blk_42` are one kind of id); digits right after a letter only
 * from three on (`ssh2`, `eth0`, and `utf8` are names, `user1234` a value).
 */
const INNER_VALUE =
  /(?<![A-Za-z0-9])\d+x\d+(?![A-Za-z0-9])|\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?|(?<!\d)\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?(?!\d)|(?<![A-Za-z0-9])[-+]?(?:0x)?[0-9a-fA-F]*\d[0-9a-fA-F]*(?:[.:-][0-9a-fA-F]+)*|(?<=[A-Za-z])\d{3,}/g;
/** A token without any of these is a word (a hex id has a digit, a host a dot, a path a slash). */
const MAYBE_VALUE = DIGIT | DOT | SLASH | AT | COLON | BACKSLASH;
/** An IPv6 address (also in brackets, with a port). */
const IPV6 = /^\[?[0-9a-fA-F]{0,4}(?::[0-9a-fA-F]{0,4}){2,7}\]?(?::\d+)?$/;

/** Punctuation around a token's value: `(host)`, `[1.2.3.4]`, `"x",` (`([{<"'` before, `)]}>"',;:.` after). */
const opens = (c: number) => c === 40 || c === 91 || c === 123 || c === 60 || c === 34 || c === 39;
const closes = (c: number) =>
  c === 41 ||
  c === 93 ||
  c === 125 ||
  c === 62 ||
  c === 34 ||
  c === 39 ||
  c === 44 ||
  c === 59 ||
  c === 58 ||
  c === 46;

/**
 * A token as compared: a variable by its form becomes `<*>`, and so does a value in a
 * frame (`[1.2.3.4]` → `[<*>]`), after a key (`rhost=host.example.net` → `rhost=<*>`) or
 * inside a word (`sshd[1234]:` → `sshd[<*>]:`).
 */
export function maskToken(token: string, chars = charsOf(token)): string {
  // Most tokens are words: nothing in them can be a value (but a boolean).
  if ((chars & MAYBE_VALUE) === 0) return isBoolean(token) ? WILDCARD : token;
  // The commonest of the others, read by their characters before any regex: what the forms
  // below make of them.
  const plain = plainForm(token);
  if (plain === NUMBER_FORM) return WILDCARD;
  if (plain === WORD_FORM) return token;
  if ((chars & COLON) !== 0 && token.includes('::') && IPV6.test(token)) return WILDCARD;
  const eq = token.indexOf('=');
  // A key is a name: before an `=` after a slash is a URL's query or a path (a value whole).
  if (eq > 0 && eq < token.length - 1 && token.lastIndexOf('/', eq) < 0)
    return `${token.slice(0, eq + 1)}${maskKeyValue(token.slice(eq + 1))}`;
  let start = 0;
  while (start < token.length && opens(token.charCodeAt(start))) start++;
  let end = token.length;
  while (end > start && closes(token.charCodeAt(end - 1))) end--;
  // In a frame (`[1.2.3.4]`, `(host)`, `"x",`): the value inside it.
  if ((start > 0 || end < token.length) && end > start) {
    const core = maskValue(token.slice(start, end));
    if (core === WILDCARD) return `${token.slice(0, start)}${WILDCARD}${token.slice(end)}`;
  }
  return maskValue(token, chars);
}

/** `plainForm`'s answers: digits in groups (`42`, `10.0.0.1`, `1,024`), or a word then `:` or `.`. */
const NUMBER_FORM = 1;
const WORD_FORM = 2;

/**
 * `NUMBER_FORM` for digits in groups split by single `.` or `,` (the number form without
 * sign or unit: a variable), `WORD_FORM` for letters then one `:` or `.` (`user:`, `done.`:
 * no form matches, and no frame holds a value), else 0.
 */
function plainForm(t: string): number {
  const n = t.length;
  let c = t.charCodeAt(0);
  if (c >= 48 && c <= 57) {
    for (let i = 1; i < n; i++) {
      c = t.charCodeAt(i);
      if (c >= 48 && c <= 57) continue;
      // A separator between two digits only.
      if ((c !== 46 && c !== 44) || i === n - 1) return 0;
      c = t.charCodeAt(++i);
      if (c < 48 || c > 57) return 0;
    }
    return NUMBER_FORM;
  }
  if (n < 2 || !isLetter(t, 0)) return 0;
  c = t.charCodeAt(n - 1);
  if (c !== 58 && c !== 46) return 0;
  for (let i = 1; i < n - 1; i++) if (!isLetter(t, i)) return 0;
  return WORD_FORM;
}

/**
 * A key's value; a run of values after one key (`type=4,71.0,old=69.5`) masked value by
 * value, so its form stays (`type=<*>,<*>,old=<*>`) and no value is a constant.
 */
function maskKeyValue(value: string): string {
  if (!value.includes(',') || !value.includes('=')) return maskToken(value);
  return value
    .split(',')
    .map((v) => (v === '' ? v : maskToken(v)))
    .join(',');
}

function maskValue(token: string, chars = charsOf(token)): string {
  if (isVariableForm(token, chars)) return WILDCARD;
  if ((chars & DIGIT) === 0) return token;
  const masked = token.replace(INNER_VALUE, WILDCARD);
  if (masked === WILDCARD || !hasLetter(masked)) return WILDCARD;
  // An identifier made of several values (`pkg~1.2~x64~~6.1.7601`, `job_2015_0001`) is one value.
  const first = masked.indexOf(WILDCARD);
  return first >= 0 && masked.indexOf(WILDCARD, first + WILDCARD.length) >= 0 ? WILDCARD : masked;
}

/**
 * Tokens that may be values, as lately masked (`maskToken` of a token is the same wherever
 * it is): most recur (times of day, a service's names with dots or digits, `[main]`), and
 * looking one up costs a fraction of masking it again. A table of `MASK_SLOTS` slots, each
 * the last token whose hash fell there: its size is fixed, and a fresh token's hash is read
 * here, cheaper than a Map's.
 */
const MASK_SLOTS = 4096;
const maskedTokens: string[] = new Array<string>(MASK_SLOTS).fill('');
const maskedAs: string[] = new Array<string>(MASK_SLOTS).fill('');
/** Each slot's token's hash: a token not held is told by it, its characters unread. */
const maskedHashes = new Int32Array(MASK_SLOTS);
/** Tokens longer than this are masked each time (few recur). */
const MASKED_LENGTH = 64;

/** `maskToken(t, chars)`, from the table when it was asked lately. */
function maskHeld(t: string, chars: number): string {
  if ((chars & MAYBE_VALUE) === 0 || t.length > MASKED_LENGTH) return maskToken(t, chars);
  let h = 0;
  for (let i = 0; i < t.length; i++) h = (Math.imul(h, 31) + t.charCodeAt(i)) | 0;
  const slot = (h ^ (h >>> 13)) & (MASK_SLOTS - 1);
  if (maskedHashes[slot] === h && maskedTokens[slot] === t) return maskedAs[slot] as string;
  const masked = maskToken(t, chars);
  const key = detached(t);
  maskedHashes[slot] = h;
  maskedTokens[slot] = key;
  maskedAs[slot] = masked === t ? key : detached(masked);
  return masked;
}

/**
 * A copy of `s` of its own: a token cut from a message may be a view of it (V8 slices
 * strings of 13 characters or more, shorter ones are copied), which would hold the whole
 * message (up to 1 MiB) for as long as the token is held in the table. Joined to a space,
 * then cut from that, it is cut from a new string of its own.
 */
const detached = (s: string) => (s.length < 13 ? s : `${s} `.slice(0, -1));

/** Masked `<*>` in parentheses: maybe a value restated (`(1.16 KB)`). */
const OPEN_WILDCARD = `(${WILDCARD}`;

/**
 * A message's tokens, masked, capped at `MAX_TOKENS` (the rest one variable). A `known`
 * value masks the last token equal to it, not every one: a value follows what names it
 * (`Invalid user user from …`: the user is the second `user`, the first is the text).
 */
export function tokenize(message: string, known?: readonly string[]): string[] {
  const n = cut(message.length > MAX_CHARS ? message.slice(0, MAX_CHARS) : message);
  // Where each known value is (its last token), -1 when it is not there.
  let values: number[] | null = null;
  if (known && known.length > 0) {
    values = [];
    for (let k = 0; k < known.length; k++) values.push(raw.lastIndexOf(known[k] as string, n - 1));
  }
  const out: string[] = [];
  let last: string | undefined;
  for (let i = 0; i < n; i++) {
    const t = raw[i] as string;
    if (!t) continue;
    if (out.length === MAX_TOKENS - 1) {
      out.push(WILDCARD);
      break;
    }
    const masked =
      values?.includes(i) || dateWord(n, i) || listedName(n, i) ? WILDCARD : maskHeld(t, bits[i] as number);
    // A value restated in parentheses (`1190 bytes (1.16 KB)`) is there or not: it is left out.
    if (masked === OPEN_WILDCARD) {
      const end = restatedValueEnd(n, i);
      if (end >= 0) {
        i = end;
        continue;
      }
    }
    // A unit after a value (`5.2 KB,`, `12 ms`) is the value's: only its punctuation stays.
    if (last !== undefined && endsWithWildcard(last)) {
      const unit = unitOf(masked);
      if (unit !== null) {
        last = `${last}${unit}`;
        out[out.length - 1] = last;
        continue;
      }
    }
    // A list of values of one form (`blk_<*> blk_<*> …`, `<*> <*>`) is one variable, whatever its length.
    if (masked === last && masked.includes(WILDCARD)) continue;
    out.push(masked);
    last = masked;
  }
  // Tokens are cut from their message (views of it, when long): a long line's are let go of
  // here, where they would hold it until as many tokens came again. What a line of at most
  // 64 tokens within `MAX_CHARS` leaves holds a few KB.
  if (n > MAX_TOKENS || message.length > MAX_CHARS) raw.fill('', 0, n);
  return out;
}

/** Whether `t` ends with `<*>` (asked of each token before the next). */
const endsWithWildcard = (t: string) =>
  t.charCodeAt(t.length - 1) === 62 && t.charCodeAt(t.length - 2) === 42 && t.charCodeAt(t.length - 3) === 60;

/** Whether the character at `i` of `t` is an ASCII letter. */
const isLetter = (t: string, i: number) => {
  const c = t.charCodeAt(i) | 32;
  return c >= 97 && c <= 122;
};

/** Whether `t` holds an ASCII letter. */
function hasLetter(t: string): boolean {
  for (let i = 0; i < t.length; i++) if (isLetter(t, i)) return true;
  return false;
}

/** Punctuation that may follow a word or a unit (`KB,`, `Jun,`, `ms)`). */
const isClosing = (c: number) => c === 44 || c === 59 || c === 58 || c === 46 || c === 41 || c === 93;

/** How long `t` is without the closing punctuation after it. */
function bodyLength(t: string): number {
  let end = t.length;
  while (end > 0 && isClosing(t.charCodeAt(end - 1))) end--;
  return end;
}

/**
 * How many letters begin a name numbered within its kind (`an14`, `node7,`: letters, then
 * digits, maybe a comma), else 0. The kind is those letters, compared where they are.
 */
function numberedKind(t: string | undefined): number {
  if (t === undefined || !isLetter(t, 0)) return 0;
  const end = t.length - (t.endsWith(',') || t.endsWith(';') ? 1 : 0);
  if (!isDigit(t.charCodeAt(end - 1))) return 0;
  let letters = 1;
  while (letters < end && isLetter(t, letters)) letters++;
  for (let i = letters; i < end; i++) if (!isDigit(t.charCodeAt(i))) return 0;
  return letters;
}

/** Whether `other` is a numbered name of the kind of `t`'s first `letters` letters. */
function sameKind(t: string, letters: number, other: string | undefined): boolean {
  return (
    other !== undefined &&
    other !== t &&
    numberedKind(other) === letters &&
    other.startsWith(t.slice(0, letters))
  );
}

/**
 * Whether token `i` (of `n`) is one of a list of names of one kind (`an14 an15 … an27`,
 * `node1, node2`): a numbered name beside another of its letters. A list's names are
 * values whatever their number; one alone (`eth0`, `ssh2`) is a name of the text.
 */
function listedName(n: number, i: number): boolean {
  // A numbered name has a digit, and so has its neighbour in a list.
  if (((bits[i] as number) & DIGIT) === 0) return false;
  if (((bitsAt(n, i - 1) | bitsAt(n, i + 1)) & DIGIT) === 0) return false;
  const t = raw[i] as string;
  const letters = numberedKind(t);
  return letters > 0 && (sameKind(t, letters, rawAt(n, i - 1)) || sameKind(t, letters, rawAt(n, i + 1)));
}

/** Names of days and months, as dates write them out (`Fri Jun 17 07:07:00 2005`). */
const DATE_WORDS = new Set(
  'mon tue wed thu fri sat sun monday tuesday wednesday thursday friday saturday sunday jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june july august september october november december'.split(
    ' ',
  ),
);

/**
 * The first two letters of those names (lower case, as one number): other words are refused
 * before a copy is made.
 */
const DATE_INITIALS = new Set([...DATE_WORDS].map((w) => w.charCodeAt(0) * 128 + w.charCodeAt(1)));

/** Whether `t` is a day's or a month's name, maybe with punctuation after it. */
function dateName(t: string | undefined): boolean {
  if (t === undefined || t.length < 3 || t.length > 10) return false;
  if (!DATE_INITIALS.has((t.charCodeAt(0) | 32) * 128 + (t.charCodeAt(1) | 32))) return false;
  const end = bodyLength(t);
  return end >= 3 && DATE_WORDS.has((end === t.length ? t : t.slice(0, end)).toLowerCase());
}

/**
 * Whether token `i` (of `n`) is a day's or a month's name in a date: beside a token with
 * digits, or beside another such name (`Fri Jun 17`): a date's words vary as its numbers do.
 */
function dateWord(n: number, i: number): boolean {
  const t = raw[i] as string;
  // Most tokens are refused here, before any string is made.
  if (t.length < 3 || t.length > 10 || ((bits[i] as number) & DIGIT) !== 0 || !isLetter(t, 0)) return false;
  const digitBeside = ((bitsAt(n, i - 1) | bitsAt(n, i + 1)) & DIGIT) !== 0;
  if (!digitBeside && (bitsAt(n, i + 2) & DIGIT) === 0) return false;
  return dateName(t) && (digitBeside || dateName(rawAt(n, i + 1)));
}

/**
 * Units of size, time and rate written after a value: the value's, not the message's
 * text (`size 5.2 KB` and `size 93 B` are one message).
 */
const UNITS = new Set(
  'b kb mb gb tb pb kib mib gib tib k m g bps kbps mbps gbps ns us µs ms s sec secs min mins h hr hrs d % ‰'.split(
    ' ',
  ),
);

/** The punctuation after a unit when `token` is a unit (`KB,` → `,`), else null. */
function unitOf(token: string): string | null {
  if (token.length > 6) return null;
  // Every unit starts with a letter, `%`, `‰` or `µ` once lower-cased (the Kelvin sign `K` is a
  // `k` then): most tokens are refused before a copy is made.
  const c = token.charCodeAt(0);
  if (!isLetter(token, 0) && c !== 37 && c !== 0x2030 && c !== 0xb5 && c !== 0x212a) return null;
  const end = bodyLength(token);
  return end > 0 && UNITS.has(token.slice(0, end).toLowerCase()) ? token.slice(end) : null;
}

/** Letters of a unit after a value (`KB`, `ms`, `sec`). */
const UNIT = /^[A-Za-z]{1,3}\)?[,;.]?$/;

/**
 * Where a parenthesised value and its unit that start at token `i` (of `n`) end (`(1.16 KB)`:
 * its index), else -1. A value alone in parentheses (`(<*>)`) stays: it is often what names a host.
 */
function restatedValueEnd(n: number, i: number): number {
  if (i + 1 >= n) return -1;
  const next = raw[i + 1] as string;
  const closed = next.endsWith(')') || next.endsWith('),') || next.endsWith(');') || next.endsWith(').');
  return closed && UNIT.test(next) ? i + 1 : -1;
}

/**
 * Values pipelines or intake put in columns (`user`, `src_ip`, `dst_ip`): where the message
 * holds them, they are variables (`tokenize`'s `known`).
 */
export function knownValues(e: {
  user: string | null;
  src_ip: string | null;
  dst_ip: string | null;
}): string[] | undefined {
  if (e.user === null && e.src_ip === null && e.dst_ip === null) return undefined;
  const known: string[] = [];
  for (const v of [e.user, e.src_ip, e.dst_ip]) if (v && v !== WILDCARD) known.push(v);
  return known;
}
