import { COLUMN_KINDS, EVENT_SCHEMA, type EventColumn } from '../core/event.js';
import { type JsonType, typedValue } from '../core/record-shape.js';
import type { FieldSummary, FieldsPlan, FieldsResult, FieldType } from './query-plan.js';
import type { ResultRow } from './result-shaper.js';

/**
 * A Fields plan's rows, as every engine's statement gives them: one per field present in
 * the sample.
 *
 * - `name`: the field; `fc`: the sampled events holding it.
 * - `fo`, `fpos`: its first appearance in the sample's order, the larger the earlier (a
 *   number, or text: the time as 16 digits, then `ev_id`), and, there, its position among
 *   the event's fields (`fields` map order, then its own columns', then the schema's
 *   columns): fields of the same count and name list in the order they appeared.
 * - `vals`: its values, each `[tag, v, t, c, o]` (or an object of those keys; the list
 *   may come as its JSON text): `v` the stored text, `c` the sampled events holding it,
 *   `o` its first appearance as `fo` is the field's;
 *   - `tag`: how the events' JSON representation (core/present-event.ts) reads the text:
 *     `s` as text; `i` a number (an integer column); `n`, `b`, `j` as the JSON type the
 *     record had (core/record-shape.ts `typedValue`); `u` by `t`, the shape's `t` object
 *     as JSON (for an engine that cannot read it itself); `t` a time, whose values
 *     are not listed (one, with an empty text);
 *   - values of the same count and the same text (12 and "12") list in the order they
 *     appeared, as they always did.
 * - `cut`: 1 when its values are cut to its `top` most common (ties kept), which the
 *   statement does only where each text stands for one value (`s`, `i`, `b`, and `n`
 *   written as JavaScript writes the number); `num`, `ip`: then, how many of its values
 *   are numbers, and texts that read as addresses.
 */
type Tag = 's' | 'i' | 'n' | 'b' | 'j' | 'u' | 't';

interface Head {
  name: string;
  fc: number;
  fo: number | string;
  fpos: number;
  cut: boolean;
  num: number;
  ip: number;
}

interface Group {
  tag: Tag;
  v: string;
  t: string | null;
  c: number;
  o: number | string;
}

const IPV4 = /^(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}$/;
const IPV6ISH = /^[0-9a-f:.]+$/i;

/** Never listed: every event's bookkeeping. */
const SKIPPED = new Set<string>(['ev_id', 'received_at', 'stored_at']);

/**
 * Names an extra field loses to a column in an event's representation (the column's
 * value is shown under it, core/present-event.ts): every column's but `fields` and `shape`.
 */
export const COLUMN_NAMES: readonly string[] = EVENT_SCHEMA.map((c) => c.name).filter(
  (n) => n !== 'fields' && n !== 'shape',
);

/** The listed columns with their tag (shapeFields' sources) and their position after the fields. */
export const LISTED = EVENT_SCHEMA.flatMap((c, i) => {
  if (SKIPPED.has(c.name) || c.type === 'map' || 'internal' in c) return [];
  const tag = c.type === 'time' ? 't' : c.type === 'int32' || c.type === 'int64' ? 'i' : 's';
  return [{ name: c.name, type: c.type, tag, pos: 2_000_000 + i }];
});

/** The same tests as the statements make them (RE2, anchored; IPV6ISH after a test for `:`). */
export const IPV4_RE2 =
  '^(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(?:\\.(?:25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}$';
export const IPV6ISH_RE2 = '(?i)^[0-9a-f:.]+$';

/** A value's own type: its column's, else what it holds (text that reads as an address is `ip`). */
function typeOf(name: string, value: unknown): FieldType {
  const column = COLUMN_KINDS[name as EventColumn];
  if (column === 'time') return 'time';
  if (column === 'ip') return 'ip';
  if (column === 'integer' || typeof value === 'number') return 'number';
  if (typeof value === 'string' && (IPV4.test(value) || (value.includes(':') && IPV6ISH.test(value))))
    return 'ip';
  return 'string';
}

/** A value as a field list shows and filters by it: objects and arrays as compact JSON text. */
function shown(value: unknown): string | number | boolean {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return JSON.stringify(value);
}

/** Parsed `t` objects: a sample repeats a handful. */
const typesCache = new Map<string, Record<string, unknown>>();

function typesOf(text: string): Record<string, unknown> {
  let types = typesCache.get(text);
  if (types === undefined) {
    try {
      const parsed: unknown = JSON.parse(text);
      types = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
    } catch {
      types = {};
    }
    if (typesCache.size >= 1024) typesCache.clear();
    typesCache.set(text, types);
  }
  return types;
}

/** A value of field `name` as the event's JSON representation holds it. */
function readValue(name: string, g: Group): unknown {
  switch (g.tag) {
    case 's':
    case 't':
      return g.v;
    case 'i':
      return Number(g.v);
    case 'n':
    case 'b':
    case 'j':
      return typedValue(g.v, g.tag);
    case 'u': {
      const types = g.t ? typesOf(g.t) : {};
      return typedValue(g.v, Object.hasOwn(types, name) ? (types[name] as JsonType) : undefined);
    }
    default:
      return g.tag satisfies never;
  }
}

/** Canonical array indexes, which a JavaScript object lists first, in numeric order. */
const INDEX = /^(?:0|[1-9]\d*)$/;
const indexOf = (name: string) => (INDEX.test(name) && Number(name) < 2 ** 32 - 1 ? Number(name) : -1);

/**
 * The order in which the events' representations, read newest first, first held each
 * field: the newest event first, and within one event its keys' order (array indexes
 * first, then as stored).
 */
function firstSeen(a: Head, b: Head): number {
  if (a.fo !== b.fo) return a.fo > b.fo ? -1 : 1;
  const ia = indexOf(a.name);
  const ib = indexOf(b.name);
  if (ia >= 0 || ib >= 0) return ia < 0 ? 1 : ib < 0 ? -1 : ia - ib;
  return a.fpos - b.fpos;
}

const count = (v: unknown) => Number(v ?? 0);
/** An order key as the engine gives it: a number (DuckDB), or text (ClickHouse). */
const order = (v: unknown) => (typeof v === 'number' || typeof v === 'bigint' ? Number(v) : String(v));
const earlier = (a: Group, b: Group) => (a.o > b.o ? -1 : a.o < b.o ? 1 : 0);

function head(r: ResultRow): Head {
  return {
    name: String(r.name),
    fc: count(r.fc),
    fo: order(r.fo),
    fpos: count(r.fpos),
    cut: Boolean(Number(r.cut)),
    num: count(r.num),
    ip: count(r.ip),
  };
}

/** A field's values: arrays `[tag, v, t, c, o]`, or objects of those keys, or their JSON text. */
function groups(vals: unknown): Group[] {
  const list = (typeof vals === 'string' ? JSON.parse(vals) : vals) as Array<
    unknown[] | Record<string, unknown>
  >;
  return list.map((x) => {
    const [tag, v, t, c, o] = Array.isArray(x) ? x : [x.tag, x.v, x.t, x.c, x.o];
    return {
      tag: String(tag) as Tag,
      v: String(v ?? ''),
      t: t === null || t === undefined || t === '' ? null : String(t),
      c: count(c),
      o: order(o),
    };
  });
}

type Entry = [value: string | number | boolean, count: number];

/**
 * The `n` first entries in the order of a stable sort by count (most first), then text
 * (`localeCompare`), then as they came: what sorting them all and keeping `n` gives, with
 * a text comparison only for an entry that ties with the last kept (a field of 10,000
 * distinct values sorted whole took most of the list's time).
 */
function firstEntries(entries: Iterable<Entry>, n: number): Entry[] {
  const kept: Entry[] = [];
  const before = (a: Entry, b: Entry) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0]));
  for (const entry of entries) {
    const last = kept[kept.length - 1];
    if (kept.length === n && last && before(entry, last) >= 0) continue;
    let at = kept.length;
    while (at > 0 && before(entry, kept[at - 1] as Entry) < 0) at--;
    kept.splice(at, 0, entry);
    if (kept.length > n) kept.pop();
  }
  return kept;
}

/**
 * A field list from a Fields plan's rows: the fields in the order the sample first held
 * them, then by count and name; per field its type (its column's kind, else the one kind
 * all its values share, else text) and top values, counted as the events' JSON
 * representation holds them (a number stays a number, an array is its JSON text).
 */
export function shapeFields(plan: FieldsPlan, rows: readonly ResultRow[], total: number): FieldsResult {
  const fields: FieldSummary[] = [];
  const read = rows.map((r) => ({ head: head(r), vals: r.vals })).sort((a, b) => firstSeen(a.head, b.head));
  for (const { head: f, vals } of read) {
    const values = new Map<string | number | boolean, number>();
    const kinds: Record<FieldType, number> = { string: 0, number: 0, ip: 0, time: 0 };
    // Uncut, the field's count is that of its values: JSON `null` in an array's place is none.
    let n = f.cut ? f.fc : 0;
    for (const g of groups(vals).sort(earlier)) {
      if (g.tag === 't') {
        n = f.fc;
        continue;
      }
      const value = readValue(f.name, g);
      if (value === null || value === undefined) continue;
      const key = shown(value);
      values.set(key, (values.get(key) ?? 0) + g.c);
      if (!f.cut) {
        kinds[typeOf(f.name, value)] += g.c;
        n += g.c;
      }
    }
    if (n === 0) continue;
    if (f.cut) {
      kinds.number = f.num;
      kinds.ip = f.ip;
    }
    fields.push({
      name: f.name,
      type: fieldType(f.name, n, kinds),
      count: n,
      top: firstEntries(values.entries(), plan.top).map(([value, c]) => ({ value, count: c })),
    });
  }
  fields.sort((a, b) => b.count - a.count || a.name.localeCompare(b.name));
  return { total, events: Math.min(total, plan.sample), fields };
}

/** A column's kind, else the kind every value has, else text: a field holding numbers and text is text. */
function fieldType(name: string, n: number, kinds: Record<FieldType, number>): FieldType {
  const column = COLUMN_KINDS[name as EventColumn];
  if (column === 'time') return 'time';
  if (column === 'ip') return 'ip';
  if (column === 'integer') return 'number';
  if (kinds.number === n) return 'number';
  if (kinds.ip === n) return 'ip';
  return 'string';
}
