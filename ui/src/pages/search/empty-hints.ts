/**
 * What a search that matched nothing can be offered instead (EmptyResults.tsx): a wider
 * time range, and for a field the query names that no event of the range has, a field that
 * is there with a close name (a typo: `hots` for `host`). Pure functions, tested in
 * test/unit/ui/empty-hints.test.ts.
 */
import { TIME_PRESETS } from '@shared/time-presets';
import { fieldName, tokenize } from './query.js';
import { type RangeSel, toRangeTime, type Window } from './time-range.js';

/** A field named in a query, and where its name is. */
export interface FieldRef {
  name: string;
  from: number;
  to: number;
}

const unescaped = (text: string) => text.replace(/\\(.)/gu, '$1');

/**
 * The fields the search part of a query names (before any pipe): each `name:` and the
 * field of `_exists_:name`. `stream:` (a stream, not a field) and `*:` are left out.
 */
export function fieldRefs(query: string): FieldRef[] {
  const tokens = tokenize(query);
  const refs: FieldRef[] = [];
  for (const [i, token] of tokens.entries()) {
    if (token.type === 'operator' && token.text === '|') break;
    if (token.type !== 'propertyName') continue;
    const name = unescaped(token.text);
    if (name === '_exists_') {
      const value = tokens[i + 2];
      if (tokens[i + 1]?.text === ':' && value && value.type !== 'paren' && value.type !== 'operator')
        refs.push({ name: unescaped(value.text), from: value.from, to: value.to });
    } else if (name !== 'stream' && name !== '*') refs.push({ name, from: token.from, to: token.to });
  }
  return refs;
}

/**
 * Edit distance with adjacent transpositions (optimal string alignment): `hots` is one
 * edit from `host`, as a typo is.
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const prev = rows[i - 1] ?? [];
      let d = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, (rows[i - 2]?.[j - 2] ?? 0) + 1);
      row.push(d);
    }
    rows.push(row);
  }
  return rows[a.length]?.[b.length] ?? 0;
}

/**
 * The field of `fields` that `name` most likely meant, when `name` is not one of them: the
 * closest by edit distance ignoring case (at most one edit per three characters), or one
 * that differs by a dotted prefix (`method` and `http.method`); among equals the most common.
 */
export function closestField(
  name: string,
  fields: readonly { name: string; count: number }[],
): string | null {
  if (fields.some((f) => f.name === name)) return null;
  const wanted = name.toLowerCase();
  const limit = Math.max(1, Math.floor(name.length / 3));
  let best: { name: string; distance: number; count: number } | null = null;
  for (const f of fields) {
    const other = f.name.toLowerCase();
    let distance = editDistance(wanted, other);
    if (other.endsWith(`.${wanted}`) || wanted.endsWith(`.${other}`)) distance = Math.min(distance, 1);
    if (distance > limit) continue;
    if (!best || distance < best.distance || (distance === best.distance && f.count > best.count))
      best = { name: f.name, distance, count: f.count };
  }
  return best?.name ?? null;
}

export interface FieldFix {
  /** Each unknown field and the one offered for it. */
  fixes: { from: string; to: string }[];
  /** The query with them replaced. */
  query: string;
}

/** The query with each field no event of `fields` has replaced by its closest one; null when none is. */
export function fixFields(
  query: string,
  fields: readonly { name: string; count: number }[],
): FieldFix | null {
  const refs = fieldRefs(query);
  const offered = new Map<string, string | null>();
  for (const ref of refs) if (!offered.has(ref.name)) offered.set(ref.name, closestField(ref.name, fields));
  let fixed = query;
  for (const ref of [...refs].reverse()) {
    const to = offered.get(ref.name);
    if (to) fixed = fixed.slice(0, ref.from) + fieldName(to) + fixed.slice(ref.to);
  }
  const fixes = [...offered].flatMap(([from, to]) => (to ? [{ from, to }] : []));
  return fixes.length > 0 ? { fixes, query: fixed } : null;
}

/** A window three times as long around its middle, moved back so that it ends by now at the latest. */
function widen(window: Window, nowS: number): RangeSel & { kind: 'absolute' } {
  const span = Math.max(1, window.ts_to - window.ts_from);
  const to = Math.min(Math.ceil(nowS), Math.ceil(window.ts_to + span));
  return { kind: 'absolute', from: Math.max(0, Math.floor(to - 3 * span)), to };
}

/**
 * Wider ranges to offer, the nearest first: for a preset (or typed relative range) the
 * larger presets that hold its window, then the largest widened; for an absolute range,
 * its window widened (three times as long, ending by now), again and again.
 */
export function widerRanges(range: RangeSel, window: Window, nowMs: number, count = 3): RangeSel[] {
  const out: RangeSel[] = [];
  const span = window.ts_to - window.ts_from;
  if (range.kind === 'preset') {
    const now = nowMs / 1000;
    for (const p of TIME_PRESETS)
      if (p.ms > 0 && p.ms / 1000 > span * 1.05 && now - p.ms / 1000 <= window.ts_from + 1)
        out.push({ kind: 'preset', preset: p.value });
  }
  let last: Window = window;
  const largest = out.at(-1);
  if (largest?.kind === 'preset') {
    const ms = TIME_PRESETS.find((p) => p.value === largest.preset)?.ms ?? 0;
    const to = Math.ceil(nowMs / 1000);
    last = { ts_from: to - ms / 1000, ts_to: to };
  }
  while (out.length < count) {
    const next = widen(last, nowMs / 1000);
    out.push(next);
    last = { ts_from: next.from, ts_to: next.to };
  }
  return out.slice(0, count);
}

/** A range as the offer names it: "the last 24 hours", or its From and To. */
export function rangeName(range: RangeSel): string {
  if (range.kind === 'absolute') return `${toRangeTime(range.from)} to ${toRangeTime(range.to)}`;
  const preset = TIME_PRESETS.find((p) => p.value === range.preset);
  return preset ? `the ${preset.label.toLowerCase()}` : range.preset;
}
