import type { EventStore } from '../../event-store/event-store.js';
import type { ExecOptions, PatternsPlan, PatternsResult } from '../../event-store/query-plan.js';
import { and, cond } from '../../filter/ast.js';
import { compareCodePoints } from '../../filter/evaluate.js';
import type { PatternGroups } from '../../pipes/program.js';
import { APPS_NAMED } from '../../query/types/patterns.js';

/** (pattern id, app) pairs read to group ids by their text: the most common, at most. */
export const GROUPED_IDS = 10_000;
/** Samples of a row (as the store gives each id). */
const SAMPLES = 3;

/** What the metadata store knows of the patterns the event store names. */
export interface PatternLookup {
  /** Each id's template text. */
  templates(ids: readonly string[]): Promise<Map<string, string>>;
  /**
   * Each id's first event time (ms) as recorded at ingest (all readers, all streams), and
   * the same for every other id whose template is one of `texts`.
   */
  firstSeen(
    ids: readonly string[],
    texts: readonly string[],
  ): Promise<Array<{ id: string; template: string; firstSeen: number }>>;
}

type Item = PatternsResult['items'][number];

/** A statement's options without its progress (the reads before the one that reports it). */
export const plainOpts = (opts: ExecOptions): ExecOptions => ({
  ...(opts.signal ? { signal: opts.signal } : {}),
  ...(opts.tag ? { tag: opts.tag } : {}),
});

/** One row: the ids of one template text, with their counts and apps. */
export interface Group {
  text: string;
  /** Whether `text` is the ids' template (false: an id whose text is unknown, a row alone). */
  known: boolean;
  ids: Map<string, number>;
  apps: Map<string, number>;
  count: number;
}

const byCount = <K extends string>(m: Map<K, number>) =>
  [...m].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

/**
 * The rows the matching readable events of `read` make, one per template text
 * (docs/api/patterns.md#one-row-per-template), as both the Patterns query and the
 * `patterns` pipe list them: the events counted by (pattern_id, app), the most common
 * `GROUPED_IDS` pairs (a Summary plan: the total, the apps, and each id's count), then the
 * ids grouped by their text, the metadata store's; an id whose text is unknown (its row
 * pruned) is a row of its own. Keyed by text (`\u0001` first) or by such an id (`\u0000`).
 */
export async function templateRows(
  store: EventStore,
  read: Pick<PatternsPlan, 'scope' | 'filter' | 'range'>,
  opts: ExecOptions,
  lookup: Pick<PatternLookup, 'templates'>,
): Promise<{ total: number; rows: Map<string, Group> }> {
  const pairs = await store.execute(
    {
      kind: 'summary',
      scope: read.scope,
      filter: and(read.filter, cond('pattern_id', 'exists')),
      range: read.range,
      groupBy: ['pattern_id', 'app'],
      metrics: [{ op: 'count' }],
      n: GROUPED_IDS,
    },
    opts,
  );
  const total = pairs.totals.count ?? 0;
  const perId = new Map<string, { count: number; apps: Map<string, number> }>();
  for (const d of pairs.details) {
    const id = d.group.pattern_id;
    if (id === null || id === undefined) continue;
    const e = perId.get(id) ?? { count: 0, apps: new Map<string, number>() };
    perId.set(id, e);
    const c = d.metrics.count ?? 0;
    e.count += c;
    const app = d.group.app;
    if (app !== null && app !== undefined) e.apps.set(app, (e.apps.get(app) ?? 0) + c);
  }
  const rows = new Map<string, Group>();
  if (!perId.size) return { total, rows };
  const text = await lookup.templates([...perId.keys()]);
  for (const [id, e] of perId) {
    const t = text.get(id);
    const key = t === undefined ? `\u0000${id}` : `\u0001${t}`;
    const g = rows.get(key) ?? {
      text: t ?? '',
      known: t !== undefined,
      ids: new Map(),
      apps: new Map(),
      count: 0,
    };
    rows.set(key, g);
    g.ids.set(id, e.count);
    g.count += e.count;
    for (const [app, c] of e.apps) g.apps.set(app, (g.apps.get(app) ?? 0) + c);
  }
  return { total, rows };
}

/**
 * The rows of `templateRows` as the `patterns` pipe's groups (pipes/program.ts): the ids
 * of each row of more than one, each in the group its least id names.
 */
export function pipeGroups(rows: Iterable<Group>): PatternGroups {
  const ids: string[] = [];
  const of: string[] = [];
  for (const g of rows) {
    if (g.ids.size < 2) continue;
    const members = [...g.ids.keys()].sort(compareCodePoints);
    for (const id of members) {
      ids.push(id);
      of.push(members[0] as string);
    }
  }
  return { ids, of };
}

/**
 * A Patterns plan as the Patterns query lists it (docs/api/patterns.md#one-row-per-template):
 * one item per template text, its ids from every app summed. The miner keeps templates per
 * app and the event store knows only ids, so the text comes from the metadata store and the
 * grouping happens here, over what the plan's scope reads:
 *
 * 1. the rows of `templateRows`: the matching readable events counted by (pattern_id,
 *    app), the ids grouped by their text;
 * 2. the `n` largest rows kept;
 * 3. the store's Patterns plan for all their ids (series, spans, samples and, with
 *    `compareTo`, each id's count there), summed per group;
 * 4. without `compareTo`, whether a group's ids have any matching readable event before the
 *    range (only for the ids the metadata store saw before it; the others cannot).
 *
 * Every statement is the store's own plan with the caller's scope, on either engine.
 */
export async function groupedPatterns(
  store: EventStore,
  plan: PatternsPlan,
  opts: ExecOptions,
  lookup: PatternLookup,
): Promise<PatternsResult> {
  const plain = plainOpts(opts);
  const { total, rows: groups } = await templateRows(store, plan, plain, lookup);
  if (!groups.size) return { total, items: [] };
  const listed = [...groups.entries()]
    .sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, plan.n)
    .map(([, g]) => g);
  const ids = listed.flatMap((g) => [...g.ids.keys()]);

  const detail = await store.execute(
    { ...plan, filter: and(plan.filter, cond('pattern_id', 'in', ids)), n: ids.length },
    opts,
  );
  const itemOf = new Map(detail.items.map((i) => [i.patternId, i]));
  const before = plan.compareTo ? null : await seenBefore(store, plan, listed, lookup, plain);

  const items: Item[] = [];
  for (const g of listed) {
    const parts = [...g.ids.keys()].flatMap((id) => itemOf.get(id) ?? []);
    const first = parts[0];
    if (!first) continue;
    const counts = byCount(new Map(parts.map((p) => [p.patternId, p.count])));
    const apps = byCount(g.apps);
    const item: Item = {
      patternId: counts[0]?.[0] ?? first.patternId,
      template: g.text,
      count: parts.reduce((s, p) => s + p.count, 0),
      firstSeen: Math.min(...parts.map((p) => p.firstSeen)),
      lastSeen: Math.max(...parts.map((p) => p.lastSeen)),
      series: first.series.map((_, b) => parts.reduce((s, p) => s + (p.series[b] ?? 0), 0)),
      samples: parts
        .flatMap((p) => p.samples)
        .sort((a, b) => b.ts - a.ts || (a.evId < b.evId ? 1 : a.evId > b.evId ? -1 : 0))
        .slice(0, SAMPLES),
      patternIds: counts.map(([id]) => id),
      apps: apps.slice(0, APPS_NAMED).map(([app, count]) => ({ app, count })),
      appsOther: Math.max(0, apps.length - APPS_NAMED),
    };
    if (plan.compareTo) item.previousCount = parts.reduce((s, p) => s + (p.previousCount ?? 0), 0);
    if (before) item.firstInRange = !before.has(g);
    items.push(item);
  }
  items.sort((a, b) => b.count - a.count || (a.template ?? '').localeCompare(b.template ?? ''));
  return {
    total: Math.max(
      total,
      items.reduce((s, i) => s + i.count, 0),
    ),
    items,
  };
}

/**
 * The rows a matching event the scope reads before the plan's range has: an event of one of
 * their ids, or of an id of the same text that has none in the range (the text from another
 * app, seen before). The metadata store's first event times (recorded over every event)
 * rule out the ids first seen at or after the range's start without a statement. The rest
 * are looked for first in as long a window just before the range (where a kind of message
 * still seen mostly has events), then those not found there from the earliest of their
 * recorded first times (an id it lost, from the start) to that window: the long read only
 * for kinds of message that came back or whose earlier events the caller may not read.
 */
async function seenBefore(
  store: EventStore,
  plan: PatternsPlan,
  rows: readonly Group[],
  lookup: PatternLookup,
  opts: ExecOptions,
): Promise<Set<Group>> {
  const rowOf = new Map<string, Group>();
  for (const g of rows) for (const id of g.ids.keys()) rowOf.set(id, g);
  const byText = new Map(rows.flatMap((g) => (g.known ? [[g.text, g] as const] : [])));
  const first = new Map<string, number>();
  for (const r of await lookup.firstSeen([...rowOf.keys()], [...byText.keys()])) {
    const g = rowOf.get(r.id) ?? byText.get(r.template);
    if (!g) continue;
    rowOf.set(r.id, g);
    first.set(r.id, r.firstSeen);
  }
  const since = (id: string) => first.get(id) ?? 0;
  const start = plan.range.fromMs;
  const near = Math.max(0, start - (plan.range.toMs - start));
  const found = new Set<string>();
  const look = async (among: readonly string[], fromMs: number, toMs: number) => {
    if (!among.length || fromMs >= toMs) return;
    const r = await store.execute(
      {
        kind: 'topn',
        scope: plan.scope,
        filter: and(plan.filter, cond('pattern_id', 'in', among)),
        range: { fromMs, toMs },
        field: 'pattern_id',
        n: among.length,
      },
      opts,
    );
    for (const i of r.items) if (i.count > 0) found.add(i.value);
  };
  const maybe = [...rowOf.keys()].filter((id) => since(id) < start);
  await look(maybe, Math.max(near, Math.min(...maybe.map(since))), start);
  const earlier = maybe.filter((id) => !found.has(id) && since(id) < near);
  await look(earlier, Math.min(...earlier.map(since)), near);
  return new Set([...found].flatMap((id) => rowOf.get(id) ?? []));
}
