/** The word index's queries (pure): what a filter needs, which blocks may hold it, their time ranges. */
import type { CondNode, FilterNode } from '../../filter/ast.js';
import { requiredLiterals } from '../../filter/regex.js';
import { scalarToString } from '../../filter/values.js';
import type { TimeWindow } from '../query-plan.js';
import { containsMode } from './duckdb-filter-compiler.js';

import { BLOCK_EVENTS, bloomHas, probeOf, TrigramSet } from './word-blocks.js';
import {
  addWindows,
  isValueField,
  KEYS_SOURCES,
  KEYS_VALUES,
  type KeyLevel,
  keyLevelOf,
  valueKey,
  valueKeys,
} from './word-keys.js';
import { type Lowering, lookupOf, out, utf8 } from './word-lowering.js';

/**
 * Joining ranges: each range is a scan of its own, about 2 ms whatever its width, while
 * scanning ~10,000 more events costs about as much (measured at 1 M events). So
 * candidates with at most `JOIN_EVENTS` events of other blocks between them become one
 * range, and a query keeps at most `MAX_RANGES` (the closest joined).
 */
export const JOIN_EVENTS = BLOCK_EVENTS;
export const MAX_RANGES = 16;
/**
 * What a range costs in events of a plain scan under exact source values alone (`host`
 * and `app` equalities, which DuckDB tests inside its scan at about 1 ns an event): a
 * range read for them, about 1–2 ms, is worth that many events. Measured at 10 M events:
 * the 16 ranges of a source that logs once an hour 18–21 ms, the plain scan 9–14.
 */
export const SOURCE_RANGE_EVENTS = 2_000_000;
/**
 * The same for an equality on any other field: a value of few events (an id) is in few
 * blocks, and testing it costs a plain scan far more (the value read from its column or the
 * event's map of fields: at 1 M shipper events, `trace_id = <one event's>` scanned every
 * event in 127 ms through the API, where one block's range is read in about 4 ms).
 */
export const VALUE_RANGE_EVENTS = 100_000;
/**
 * The most of a window's events the ranges of a word may hold and still be read instead
 * of the window. Ranges are a scan each under `UNION ALL`, which prunes row groups by their
 * time but takes from a page sorted by time the filter its top-n pushes into a plain scan
 * (the newest rows' row groups first, the rest skipped once the page is full). Measured at
 * 10 M events, a word in one message in 10,000: its 16 ranges holding 98.7 % of the window
 * cost 1.6 s for the page and 1.3-1.7 for the count, the plain scan 0.21-0.25 and
 * 1.0-1.2; three ranges holding 12.5 %, 0.21 s for the count against 1.0-1.1, the page
 * 0.24 either way.
 */
export const WORD_RANGES_MAX_SHARE = 0.5;

// ---------------------------------------------------------------------------------------
// Queries (pure)

/**
 * What a filter requires in the index's terms: `word` (the message contains the value,
 * case-insensitively, as `containsText` tests it), `exact` (the message contains the value
 * as it is written, case included), `value` (a field holds exactly the value, as text),
 * every one of `all`, or at least one of `any`; `undefined` requires nothing the index can
 * use.
 */
export type WordNeed =
  | { readonly kind: 'word' | 'exact'; readonly value: string }
  | { readonly kind: 'value'; readonly field: string; readonly value: string }
  | { readonly kind: 'all' | 'any'; readonly items: readonly WordNeed[] };

/**
 * The message substrings and field values `filter` requires: bare words, phrases, every
 * condition on `message` that implies a literal (`contains`, `startswith`, `endswith`,
 * `eq`, `in`, and a regex's required literals, which also covers wildcards), and `eq` and
 * `in` on any field compared as text (`isValueField`: `host`, `user`, `trace_id`...), under
 * ANDs, and under ORs whose every branch requires one. Negations and every other condition
 * require nothing.
 */
export function wordNeeds(filter: FilterNode): WordNeed | undefined {
  switch (filter.kind) {
    case 'text':
      return { kind: 'word', value: filter.value };
    case 'cond':
      if (filter.field === 'message') return condNeeds(filter);
      return isValueField(filter.field) ? valueNeeds(filter.field, filter) : undefined;
    case 'and':
      return all(filter.items.map(wordNeeds).filter((n): n is WordNeed => n !== undefined));
    case 'or': {
      const items = filter.items.map(wordNeeds);
      if (items.length === 0 || items.some((n) => n === undefined)) return undefined;
      return items.length === 1 ? items[0] : { kind: 'any', items: items as WordNeed[] };
    }
    default:
      return undefined;
  }
}

const all = (items: WordNeed[]): WordNeed | undefined =>
  items.length === 0 ? undefined : items.length === 1 ? items[0] : { kind: 'all', items };

/** What an equality on a field requires: its exact value (`eq`), or one of them (`in`). */
function valueNeeds(field: string, c: CondNode): WordNeed | undefined {
  if (c.op === 'eq') return { kind: 'value', field, value: scalarToString(c.value) };
  if (c.op !== 'in' || c.value.length === 0) return undefined;
  const items = c.value.map((v): WordNeed => ({ kind: 'value', field, value: scalarToString(v) }));
  return items.length === 1 ? items[0] : { kind: 'any', items };
}

/** What a condition on `message` requires (its value as the filter compiler tests it). */
function condNeeds(c: CondNode): WordNeed | undefined {
  switch (c.op) {
    case 'contains':
      return { kind: 'word', value: c.value };
    case 'startswith':
    case 'endswith':
      return { kind: 'exact', value: c.value };
    case 'eq':
      return { kind: 'exact', value: scalarToString(c.value) };
    case 'in': {
      const items = c.value.map((v): WordNeed => ({ kind: 'exact', value: scalarToString(v) }));
      return items.length === 0 ? undefined : items.length === 1 ? items[0] : { kind: 'any', items };
    }
    case 'regex':
      return regexNeeds(c.value);
    default:
      return undefined;
  }
}

/**
 * A regex's required literals (`requiredLiterals`): each as written; under `(?i)` only
 * their stretches of ASCII characters whose every case variant is ASCII (not k or s:
 * RE2 folds them with the Kelvin sign and the long s), as case-insensitive words.
 */
export function regexNeeds(pattern: string): WordNeed | undefined {
  const found = requiredLiterals(pattern);
  if (!found) return undefined;
  if (!found.ignoreCase) return all(found.literals.map((value) => ({ kind: 'exact', value })));
  const words = found.literals.flatMap((l) => l.split(/[^ -~\t\n\r]|[ksKS]/).filter((w) => w.length >= 3));
  return all(words.map((value) => ({ kind: 'word', value })));
}

/** Per lowering: the code points that appear where `toLowerCase()` and DuckDB differ. */
const jsOnly = new WeakMap<Lowering, Set<number>>();

/**
 * The characters JavaScript's lowering writes where DuckDB's writes something else
 * (U+0130's "i\u0307", Unicode 16 capitals' small letters, ...) plus both small sigmas
 * (`toLowerCase` picks the final form by context). Outside them, a stretch of
 * `s.toLowerCase()` comes from code points both lower alike, so it is also in DuckDB's
 * lowering. Computed once, on the first needle that needs it (a scan of every code point).
 */
function jsOnlyOf(l: Lowering): Set<number> {
  let set = jsOnly.get(l);
  if (!set) {
    set = new Set([0x3c2, 0x3c3]);
    const duck = new Map<number, string>();
    l.from.forEach((cp, i) => {
      duck.set(cp, l.to[i] ?? '');
    });
    for (let cp = 0; cp < 0x110000; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      const js = c.toLowerCase();
      if (js !== (duck.get(cp) ?? c)) for (const x of js) set.add(x.codePointAt(0) as number);
    }
    jsOnly.set(l, set);
  }
  return set;
}

/**
 * The trigrams every message that contains `value` (as `containsText` tests it) holds in
 * the index; empty when the needle is too short to require any.
 */
export function needleTrigrams(value: string, l: Lowering): Uint32Array {
  return needleKeys(value, l).trigrams;
}

/**
 * What every message that contains `value` (as `containsText` tests it) holds in the
 * index: its trigrams, and the keys of its long runs of letters and digits (`addWindows`,
 * in a block holding every value); both empty when the needle is too short for them.
 */
function needleKeys(value: string, l: Lowering): { trigrams: Uint32Array; windows: Uint32Array } {
  const needle = value.toLowerCase();
  const set = new TrigramSet();
  const windows = new Set<number>();
  const add = (n: number) => {
    set.addBytes(n);
    addWindows(out, n, windows);
  };
  if (containsMode(needle) === 'lower') {
    // contains(lower(message), needle): the needle's bytes are in the lowered message
    // (or, holding i or U+0307, in the lowered message with U+0130 replaced).
    add(utf8(needle, null));
  } else {
    // message.toLowerCase().includes(needle): only stretches both lowerings agree on.
    const skip = jsOnlyOf(l);
    let stretch = '';
    for (const c of needle) {
      if (skip.has(c.codePointAt(0) as number)) {
        add(utf8(stretch, null));
        stretch = '';
      } else stretch += c;
    }
    add(utf8(stretch, null));
  }
  return { trigrams: set.take(), windows: Uint32Array.from(windows) };
}

/**
 * The trigrams every message that contains `value` as it is written holds in the index:
 * DuckDB lowers code point by code point, so the lowered message contains the lowered
 * value (a value's lone surrogates are U+FFFD, as the message's and the SQL's are).
 */
export function exactTrigrams(value: string, l: Lowering): Uint32Array {
  return exactKeys(value, l).trigrams;
}

/** `exactTrigrams`, and the keys of the value's long runs of letters and digits. */
function exactKeys(value: string, l: Lowering): { trigrams: Uint32Array; windows: Uint32Array } {
  const set = new TrigramSet();
  const windows = new Set<number>();
  const n = utf8(value, lookupOf(l));
  set.addBytes(n);
  addWindows(out, n, windows);
  return { trigrams: set.take(), windows: Uint32Array.from(windows) };
}

/**
 * What the index knows of a block. `bloom` null: no bloom, always a candidate; `keys`: the
 * values its bloom holds (word-blocks.ts), a candidate for every need of a value it lacks.
 */
export interface IndexedBlock {
  readonly id: bigint;
  readonly minTs: number;
  readonly maxTs: number;
  readonly events: number;
  readonly lowering: number;
  readonly probes: number;
  readonly bloom: Uint8Array | null;
  readonly keys: KeyLevel;
  /** Its events' `stored_at`; null for a block written before the store kept it. */
  readonly stored: StoredSpan | null;
}

/**
 * An inclusive span of `stored_at` (whole ms). The store stamps each append's events
 * with one `stored_at` and appends them in turn, so a block's events lie in the rows of
 * its span, whatever their `ts`: the `stored_at` zone maps find them where the `ts` ones
 * cannot (late events widen every row group's `ts` range).
 */
export interface StoredSpan {
  readonly from: number;
  readonly to: number;
}

/** Whether a block may hold an event meeting the need; `undefined`: every block may. */
export type BlockTest = (b: IndexedBlock) => boolean;

export function blockTest(need: WordNeed, l: Lowering): BlockTest | undefined {
  switch (need.kind) {
    case 'word':
    case 'exact': {
      const { trigrams, windows } =
        need.kind === 'word' ? needleKeys(need.value, l) : exactKeys(need.value, l);
      if (trigrams.length === 0) return undefined;
      const p = probeOf(trigrams);
      // The windows' keys are in the blocks that hold every value, built with this lowering.
      const w = windows.length > 0 ? probeOf(windows) : null;
      return (b) =>
        b.bloom === null ||
        b.lowering !== l.id ||
        (bloomHas(b.bloom, b.probes, p) &&
          (w === null || b.keys < KEYS_VALUES || bloomHas(b.bloom, b.probes, w)));
    }
    case 'value': {
      // A block with every value holds both of its keys; one with the sources' alone, the first.
      const both = probeOf(Uint32Array.from(valueKeys(need.field, need.value)));
      const first = probeOf(Uint32Array.of(valueKey(need.field, need.value)));
      const level = keyLevelOf(need.field);
      return (b) =>
        b.bloom === null ||
        b.keys < level ||
        bloomHas(b.bloom, b.probes, b.keys === KEYS_VALUES ? both : first);
    }
    case 'all': {
      const tests = need.items.map((n) => blockTest(n, l)).filter((t): t is BlockTest => t !== undefined);
      if (tests.length === 0) return undefined;
      return (b) => tests.every((t) => t(b));
    }
    case 'any': {
      const tests = need.items.map((n) => blockTest(n, l));
      if (tests.some((t) => t === undefined)) return undefined;
      return (b) => tests.some((t) => (t as BlockTest)(b));
    }
    default:
      return need satisfies never;
  }
}

/** Whether a need is exact field values alone (`host:a AND trace_id:b`), no word and no choice. */
export function valuesOnly(need: WordNeed): boolean {
  return need.kind === 'value' || (need.kind === 'all' && need.items.every(valuesOnly));
}

/** What a range costs of a plain scan under exact values alone (`valuesOnly`), in events. */
function rangeEvents(need: WordNeed): number {
  if (need.kind === 'value')
    return keyLevelOf(need.field) === KEYS_SOURCES ? SOURCE_RANGE_EVENTS : VALUE_RANGE_EVENTS;
  return need.kind === 'all' ? Math.min(...need.items.map(rangeEvents)) : SOURCE_RANGE_EVENTS;
}

/**
 * Whether reading `ranges` beats scanning all of `range`. For a need on exact field values
 * alone, each range costs `SOURCE_RANGE_EVENTS` events of that scan (`VALUE_RANGE_EVENTS`
 * when a value is of a field that names no source) and the ranges save the events of the
 * blocks they leave out. Any other need tests each event it reads at a far
 * higher cost (a word in the message): its ranges pay unless they hold more than
 * `WORD_RANGES_MAX_SHARE` of the window's events (a word in every part of the window).
 * No range at all always pays (nothing is read).
 */
export function rangesPay(
  need: WordNeed,
  ranges: readonly WordRange[],
  blocks: readonly IndexedBlock[],
  range: TimeWindow,
): boolean {
  if (ranges.length === 0) return true;
  let left = 0;
  let all = 0;
  let k = 0;
  for (const b of blocks) {
    if (b.maxTs < range.fromMs || b.minTs >= range.toMs) continue;
    all += b.events;
    while (k < ranges.length && (ranges[k] as WordRange).toMs < b.minTs) k++;
    const r = ranges[k];
    if (!r || r.fromMs > b.maxTs) left += b.events;
  }
  if (!valuesOnly(need)) return all - left <= all * WORD_RANGES_MAX_SHARE;
  return ranges.length * rangeEvents(need) < left;
}

/** Whether a filter requires a word of the message (not only exact field values). */
export function testsWords(filter: FilterNode): boolean {
  const need = wordNeeds(filter);
  return need !== undefined && !valuesOnly(need);
}

/**
 * An inclusive range of `ts` (whole ms) that may hold matching events; `stored`, the
 * `stored_at` span its blocks' events lie in, when every one of them knows its own.
 */
export interface WordRange {
  readonly fromMs: number;
  readonly toMs: number;
  readonly stored?: StoredSpan;
}

/** A range being built: its blocks' `stored_at` hull, null once one of them has none. */
type Run = { fromMs: number; toMs: number; stored: StoredSpan | null };

const hull = (a: StoredSpan | null, b: StoredSpan | null): StoredSpan | null =>
  a && b ? { from: Math.min(a.from, b.from), to: Math.max(a.to, b.to) } : null;

const rangeOf = (r: Run): WordRange =>
  r.stored ? { fromMs: r.fromMs, toMs: r.toMs, stored: r.stored } : { fromMs: r.fromMs, toMs: r.toMs };

/**
 * The time ranges of the candidate blocks among `blocks` (sorted by `minTs`) that meet
 * `range`: candidates with at most `joinEvents` events of other blocks between them
 * joined, overlaps merged, and at most `maxRanges` (the smallest gaps closed). Joining
 * only widens a range, so it never loses a match.
 */
export function candidateRanges(
  blocks: readonly IndexedBlock[],
  test: BlockTest,
  range: TimeWindow,
  { maxRanges = MAX_RANGES, joinEvents = JOIN_EVENTS } = {},
): WordRange[] {
  const runs: Run[] = [];
  let run: Run | null = null;
  /** Events of the non-candidate blocks since the run's last candidate. */
  let skipped = 0;
  for (const b of blocks) {
    if (b.maxTs < range.fromMs || b.minTs >= range.toMs) continue;
    if (test(b)) {
      if (run && skipped <= joinEvents) {
        run.toMs = Math.max(run.toMs, b.maxTs);
        run.stored = hull(run.stored, b.stored);
      } else {
        if (run) runs.push(run);
        run = { fromMs: b.minTs, toMs: b.maxTs, stored: b.stored };
      }
      skipped = 0;
    } else if (run) skipped += b.events;
  }
  if (run) runs.push(run);
  runs.sort((a, b) => a.fromMs - b.fromMs);
  const merged: Run[] = [];
  for (const r of runs) {
    const last = merged[merged.length - 1];
    if (last && r.fromMs <= last.toMs + 1) {
      last.toMs = Math.max(last.toMs, r.toMs);
      last.stored = hull(last.stored, r.stored);
    } else merged.push({ ...r });
  }
  if (merged.length <= maxRanges) return merged.map(rangeOf);
  // Keep the widest gaps as the cuts between ranges.
  const gaps = merged
    .slice(1)
    .map((r, i) => ({ i: i + 1, gap: r.fromMs - (merged[i] as Run).toMs }))
    .sort((a, b) => b.gap - a.gap || a.i - b.i)
    .slice(0, Math.max(0, maxRanges - 1))
    .map((g) => g.i)
    .sort((a, b) => a - b);
  const capped: WordRange[] = [];
  let start = 0;
  for (const cut of [...gaps, merged.length]) {
    const parts = merged.slice(start, cut);
    capped.push(
      rangeOf({
        fromMs: (parts[0] as Run).fromMs,
        toMs: Math.max(...parts.map((p) => p.toMs)),
        stored: parts.reduce<StoredSpan | null>((h, p) => hull(h, p.stored), (parts[0] as Run).stored),
      }),
    );
    start = cut;
  }
  return capped;
}
