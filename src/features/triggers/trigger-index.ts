import { COLUMN_KINDS, type EventColumn } from '../../core/event.js';
import type { CondNode, FilterNode } from '../../filter/ast.js';
import { lowerCond, parseNumeric, scalarToString } from '../../filter/ast.js';
import { fieldKind } from '../../filter/conditions.js';
import { compilePredicate, type EventLike, lower, type Predicate } from '../../filter/evaluate.js';

/** What the index needs of a trigger: its id and its filter AST. */
export interface IndexedTrigger {
  readonly id: number;
  readonly filter: FilterNode;
}

/** An equality every match must satisfy: `field` is one of `keys` (as text). */
interface Key {
  field: string;
  keys: string[];
}

/**
 * The text an equality key is compared on: an integer column's value as its decimal
 * text, anything else as its string. Equal keys are necessary for `eq` to hold (the
 * evaluator then decides), so the index never drops a match.
 */
function keyOf(field: string, value: string | number | boolean): string | undefined {
  switch (fieldKind(field)) {
    case 'integer': {
      const n = parseNumeric(value);
      return n === undefined ? undefined : String(n);
    }
    case 'time':
      // Equality on times compares parsed instants; not worth indexing.
      return undefined;
    case 'string':
    case 'ip':
      return scalarToString(value);
    default:
      return undefined;
  }
}

function condKey(node: CondNode): Key | undefined {
  if (node.op === 'eq') {
    const k = keyOf(node.field, node.value);
    return k === undefined ? undefined : { field: node.field, keys: [k] };
  }
  if (node.op === 'in') {
    const keys = node.value.map((v) => keyOf(node.field, v));
    return keys.every((k) => k !== undefined) ? { field: node.field, keys: keys as string[] } : undefined;
  }
  return undefined;
}

/** Every equality conjunct of a filter: each is a key every matching event satisfies. */
function candidateKeys(node: FilterNode): Key[] {
  const conjuncts = node.kind === 'and' ? node.items : [node];
  return conjuncts.flatMap((c) => {
    // Keyed as the evaluator compares: after lowering (`severity:err` is `error`).
    const lowered = c.kind === 'cond' ? lowerCond(c) : c;
    return lowered.kind === 'cond' ? (condKey(lowered) ?? []) : [];
  });
}

const keyId = (field: string, key: string) => `${field}\u0000${key}`;

/** The field's value as text, read as the evaluator reads it (columns, then `fields`). */
const readText = (e: EventLike, field: string): string | undefined => {
  const v = Object.hasOwn(COLUMN_KINDS, field)
    ? e[field as EventColumn]
    : e.fields !== undefined && Object.hasOwn(e.fields, field)
      ? e.fields[field]
      : undefined;
  return v === null || v === undefined ? undefined : String(v);
};

interface Compiled {
  id: number;
  predicate: Predicate;
}

/**
 * Lower-cased text the message must contain for the filter to hold: a top-level text
 * term or `message contains`, as the evaluator tests them (`lower(message).includes`).
 */
function requiredText(node: FilterNode): string | undefined {
  const conjuncts = node.kind === 'and' ? node.items : [node];
  for (const c of conjuncts) {
    const needle =
      c.kind === 'text'
        ? c.value
        : c.kind === 'cond' && c.op === 'contains' && c.field === 'message'
          ? c.value
          : '';
    if (needle) return needle.toLowerCase();
  }
  return undefined;
}

const escapeRegExp = (s: string) => s.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');

/**
 * Matches events against many triggers at once. Each trigger's filter is compiled once
 * by the evaluator the query engine's semantics are defined by (filter/evaluate.ts:
 * RE2 regexes, the stores' comparisons). Triggers whose filter requires `field = value`
 * (a top-level `eq` or `in`) are bucketed by that value, so an event is evaluated only
 * against the triggers its own values can satisfy plus the few without such a key, the
 * way a percolator indexes stored queries.
 */
export class TriggerIndex {
  private readonly byField = new Map<string, Map<string, Compiled[]>>();
  private readonly unkeyed: Compiled[] = [];
  /** Unkeyed triggers that need some text in the message, and one test for "any of it". */
  private readonly texted: Compiled[] = [];
  private readonly anyText: RegExp | null = null;
  readonly size: number;

  constructor(triggers: readonly IndexedTrigger[]) {
    this.size = triggers.length;
    // A trigger is filed under the equality the fewest other triggers share, so buckets
    // stay small: "app:nginx AND http.path:/login" goes under the path, not under nginx.
    const candidates = triggers.map((t) => candidateKeys(t.filter));
    const sharing = new Map<string, number>();
    for (const keys of candidates)
      for (const k of keys)
        for (const v of k.keys) sharing.set(keyId(k.field, v), (sharing.get(keyId(k.field, v)) ?? 0) + 1);
    const weight = (k: Key) => k.keys.reduce((s, v) => s + (sharing.get(keyId(k.field, v)) ?? 0), 0);
    const needles = new Set<string>();
    triggers.forEach((t, i) => {
      const compiled = { id: t.id, predicate: compilePredicate(t.filter) };
      const key = (candidates[i] ?? []).sort((a, b) => weight(a) - weight(b))[0];
      if (!key) {
        const needle = requiredText(t.filter);
        if (needle === undefined) this.unkeyed.push(compiled);
        else {
          this.texted.push(compiled);
          needles.add(needle);
        }
        return;
      }
      let buckets = this.byField.get(key.field);
      if (!buckets) {
        buckets = new Map();
        this.byField.set(key.field, buckets);
      }
      for (const k of new Set(key.keys)) {
        const list = buckets.get(k);
        if (list) list.push(compiled);
        else buckets.set(k, [compiled]);
      }
    });
    // One scan of the message rules out every text trigger at once for most events: a
    // literal alternation, so no backtracking blow-up.
    if (needles.size) this.anyText = new RegExp([...needles].map(escapeRegExp).join('|'));
  }

  /** Ids of the triggers `event` matches, in no particular order. */
  match(event: EventLike): number[] {
    const out: number[] = [];
    for (const t of this.unkeyed) if (t.predicate(event)) out.push(t.id);
    if (this.anyText && typeof event.message === 'string' && this.anyText.test(lower(event.message))) {
      for (const t of this.texted) if (t.predicate(event)) out.push(t.id);
    }
    for (const [field, buckets] of this.byField) {
      const value = readText(event, field);
      if (value === undefined) continue;
      for (const t of buckets.get(value) ?? []) if (t.predicate(event)) out.push(t.id);
    }
    return out;
  }
}
