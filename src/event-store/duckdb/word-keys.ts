/**
 * The word index's keys beside the trigrams (word-blocks.ts): the exact values of an
 * event's fields (`valueKey`), and the windows of its message's long runs of letters and
 * digits (`addWindows`). Pure: plain data in and out.
 */
import { EVENT_SCHEMA, type NormalisedEvent } from '../../core/event.js';

/** What the index needs of an event: its time, message and the values it keys. */
export type WordEvent = Pick<NormalisedEvent, 'ts' | 'message'> & Partial<NormalisedEvent>;

/** Keys are at or above this; trigrams below. */
export const KEY_BASE = 0x1000000;

/**
 * The most distinct value and window keys a block holds per event: past it, only its
 * source keys (word-blocks.ts `bounded`). The shipper bench's blocks hold about 5 keys and
 * trigrams an event in all (6.3 bytes of bloom at 10 bits each); a record of hundreds of
 * random fields, or a message of one long random run, would otherwise size the bloom.
 */
export const KEYS_PER_EVENT = 16;

// ---------------------------------------------------------------------------------------
// Windows: what narrows an id made of hex digits, whose trigrams are in every block

/** Bytes of a window, and windows a group: a run gives keys from this length on. */
export const WINDOW_BYTES = 8;
export const WINDOW_GROUP = 4;
export const MIN_WINDOW_RUN = WINDOW_BYTES + WINDOW_GROUP - 1;

const isRunByte = (b: number) => (b >= 0x30 && b <= 0x39) || (b >= 0x61 && b <= 0x7a);

/**
 * The keys of the runs of ASCII digits and small letters of `bytes[0, n)` (lowered: through
 * `lower` when given) that are at least `MIN_WINDOW_RUN` long: of each `WINDOW_GROUP`
 * consecutive windows of `WINDOW_BYTES` bytes, the one of least hash (a minimizer).
 *
 * A needle's run of at least `MIN_WINDOW_RUN` bytes lies inside a run of every message
 * holding it, so every group of windows wholly inside the needle is a group of that
 * message's run too, and its least window is among the message's keys: a block lacking
 * any of the needle's keys holds no message containing it (`needleWindows`). Trigrams
 * cannot tell such needles apart: random hex puts every hex trigram in every block.
 * Minimizers keep a run's keys to about 2 in 5 of its windows.
 */
export function addWindows(bytes: Uint8Array, n: number, keys: Set<number>, lower?: Uint8Array): void {
  let b = bytes;
  if (lower) {
    // The ASCII fast path's bytes as written: lowered into a scratch copy first.
    if (lowered.length < n) lowered = new Uint8Array(Math.max(n, lowered.length * 2));
    for (let k = 0; k < n; k++) lowered[k] = lower[bytes[k] as number] as number;
    b = lowered;
  }
  let i = 0;
  while (i < n) {
    if (!isRunByte(b[i] as number)) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < n && isRunByte(b[j] as number)) j++;
    const count = j - i - WINDOW_BYTES + 1;
    if (j - i >= MIN_WINDOW_RUN) {
      if (hashes.length < count) hashes = new Uint32Array(Math.max(count, hashes.length * 2));
      for (let w = 0; w < count; w++) {
        let h = 0x2f6b8a1d;
        for (let k = i + w; k < i + w + WINDOW_BYTES; k++) h = Math.imul(h ^ (b[k] as number), 0x01000193);
        hashes[w] = (h | KEY_BASE) >>> 0;
      }
      for (let g = 0; g + WINDOW_GROUP <= count; g++) {
        let least = hashes[g] as number;
        for (let k = g + 1; k < g + WINDOW_GROUP; k++)
          if ((hashes[k] as number) < least) least = hashes[k] as number;
        keys.add(least);
      }
    }
    i = j;
  }
}
/** Scratch space of `addWindows`: a run's window hashes, an ASCII message lowered. */
let hashes = new Uint32Array(256);
let lowered = new Uint8Array(4096);

/**
 * Which exact values a block's bloom holds (`IndexedBlock.keys`): none (blocks built before
 * the keys), those of the fields naming a source (`SOURCE_FIELDS`: blocks built before the
 * other values, and cold files' summaries, which read no other field), or every value of
 * the fields in `VALUE_COLUMNS` and of every extra field.
 */
export const KEYS_NONE = 0;
export const KEYS_SOURCES = 1;
export const KEYS_VALUES = 2;
export type KeyLevel = typeof KEYS_NONE | typeof KEYS_SOURCES | typeof KEYS_VALUES;

/** Fields whose exact values every block with keys holds (the fields naming a source). */
export const SOURCE_FIELDS = ['host', 'app'] as const;

/**
 * The event's columns an equality compares as text (the filter compiler's `string` and
 * `ip` kinds), whose values a block's bloom holds: every text and address column but the
 * message (its words are the trigrams), the id, the internal ones, `severity` (eight
 * names, in every block) and `pattern_id` (re-mining rewrites it in place: a key would go
 * stale). Extra fields are compared as text too: each of their values is a key as well.
 */
const NO_VALUE_KEYS: ReadonlySet<string> = new Set(['ev_id', 'severity', 'pattern_id']);
export const VALUE_COLUMNS = EVENT_SCHEMA.filter(
  (c) =>
    (c.type === 'text' || c.type === 'ip') &&
    !('prose' in c) &&
    !('internal' in c) &&
    !NO_VALUE_KEYS.has(c.name),
).map((c) => c.name) as ReadonlyArray<keyof NormalisedEvent>;
const VALUE_COLUMN_SET: ReadonlySet<string> = new Set(VALUE_COLUMNS);

/** Whether `field = value` is a text equality whose value a block with every value holds. */
export const isValueField = (field: string): boolean =>
  VALUE_COLUMN_SET.has(field) || !EVENT_SCHEMA.some((c) => c.name === field);

/** The level of keys a block needs for its bloom to answer an equality on `field`. */
export const keyLevelOf = (field: string): KeyLevel =>
  (SOURCE_FIELDS as readonly string[]).includes(field) ? KEYS_SOURCES : KEYS_VALUES;

/** The bloom key of a field's exact value (FNV-1a of field and value, past the trigrams). */
export function valueKey(field: string, value: string, seed = SEED_1): number {
  let h = seed;
  for (let i = 0; i < field.length; i++) h = Math.imul(h ^ field.charCodeAt(i), 0x01000193);
  h = Math.imul(h, 0x01000193); // the separator, 0
  for (let i = 0; i < value.length; i++) h = Math.imul(h ^ value.charCodeAt(i), 0x01000193);
  return (h | KEY_BASE) >>> 0;
}
const SEED_1 = 0x811c9dc5;
const SEED_2 = 0x9747b28c;

/**
 * The keys of a value in a block holding every value (`KEYS_VALUES`): two, of two seeds.
 * A value is one element where a needle has many trigrams, so a bloom's false positives
 * (about 1 % a block, 6 % a block of late events) would be its own: 9 false candidate
 * blocks of 209 for one event's trace_id at 1 M events with one key, about the square
 * of that with two.
 */
export const valueKeys = (field: string, value: string): [number, number] => [
  valueKey(field, value),
  valueKey(field, value, SEED_2),
];

/** Adds both keys of a value (`valueKeys`), hashed in one pass. */
function addValue(keys: Set<number>, field: string, value: string): void {
  let h1 = SEED_1;
  let h2 = SEED_2;
  for (let i = 0; i < field.length; i++) {
    const c = field.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x01000193);
  }
  h1 = Math.imul(h1, 0x01000193);
  h2 = Math.imul(h2, 0x01000193);
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x01000193);
  }
  keys.add((h1 | KEY_BASE) >>> 0);
  keys.add((h2 | KEY_BASE) >>> 0);
}

/** The value keys of an event: its source fields', or every value (`KEYS_VALUES`). */
export function addValueKeys(keys: Set<number>, e: WordEvent, level: KeyLevel): void {
  if (level === KEYS_NONE) return;
  if (level === KEYS_SOURCES) {
    for (const c of SOURCE_FIELDS) {
      const v = e[c];
      if (typeof v === 'string') keys.add(valueKey(c, v));
    }
    return;
  }
  for (const c of VALUE_COLUMNS) {
    const v = e[c as keyof WordEvent];
    if (typeof v === 'string') addValue(keys, c, v);
  }
  if (e.fields) for (const f in e.fields) addValue(keys, f, e.fields[f] as string);
}
