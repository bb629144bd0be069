import {
  changeScore,
  EXAMINED_SHARE,
  examinable,
  FIRST_EXAMINED,
  MAX_EXAMINED,
} from '../core/change-score.js';
import { COLUMN_KINDS, type EventColumn } from '../core/event.js';
import { and, cond } from '../filter/ast.js';
import type { Driver, PlanDialect } from './plan-executor.js';
import type {
  ChangeCandidate,
  ChangesPlan,
  ChangesResult,
  ExecOptions,
  PatternsPlan,
  TimeWindow,
} from './query-plan.js';

/** Samples of a listed pattern. */
const SAMPLES = 3;

const seconds = (w: TimeWindow) => (w.toMs - w.fromMs) / 1000;
const isNumericColumn = (f: string) =>
  Object.hasOwn(COLUMN_KINDS, f) && COLUMN_KINDS[f as EventColumn] === 'integer';

/**
 * What the focus window's events in scope hold: how many they are, and per field how many
 * have it and whether every one of them as a number.
 */
export interface FieldPresence {
  events: number;
  fields: Array<{ name: string; count: number; number: boolean }>;
}

/**
 * The fields a changes plan examines: those it names, or the default set (docs/api/explain.md):
 * host, app, severity, src_ip, user and status where the focus window's events have them,
 * then every other examinable field in at least 1 % of them, most common first, 20 in all.
 */
export function examinedFields(presence: FieldPresence): string[] {
  const present = new Map(presence.fields.map((f) => [f.name, f.count]));
  const first: string[] = FIRST_EXAMINED.filter((f) => (present.get(f) ?? 0) > 0);
  const rest = presence.fields
    .filter(
      (f) =>
        !first.includes(f.name) &&
        examinable(f.name) &&
        f.count > 0 &&
        f.count >= EXAMINED_SHARE * presence.events,
    )
    .sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : 1))
    .map((f) => f.name);
  return [...first, ...rest].slice(0, MAX_EXAMINED);
}

/** Whether the focus window's fields are needed: for the default fields, or an extra field's type. */
const needsPresence = (plan: ChangesPlan) =>
  plan.fields === null || plan.fields.some((f) => !Object.hasOwn(COLUMN_KINDS, f));

/** Which fields the focus window's events in scope have, how often, and which hold numbers. */
async function fieldPresence<S>(
  dialect: PlanDialect<S>,
  run: Driver<S>,
  plan: ChangesPlan,
  opts: ExecOptions,
): Promise<FieldPresence> {
  const { rows } = await run(dialect.fieldPresence(plan), opts);
  const presence: FieldPresence = { events: 0, fields: [] };
  for (const r of rows) {
    const n = Number(r.n);
    if (r.name === null || r.name === undefined) presence.events = n;
    else if (n > 0) presence.fields.push({ name: String(r.name), count: n, number: Number(r.num) === n });
  }
  return presence;
}

/** A value as an answer gives it: numbers of number columns and number fields stay numbers. */
function typed(field: string, text: string, numberFields: ReadonlySet<string>): string | number {
  if (!isNumericColumn(field) && !numberFields.has(field)) return text;
  const n = Number(text);
  return Number.isFinite(n) && text.trim() !== '' ? n : text;
}

/** Array and object values (kept as their JSON text) are not candidates. */
const isComposite = (text: string) => {
  if (!(text.startsWith('[') && text.endsWith(']')) && !(text.startsWith('{') && text.endsWith('}')))
    return false;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null;
  } catch {
    return false;
  }
};

/** Listed order: score, then both counts, patterns before fields, then id, field, value text. */
function compareChanges(a: ChangeCandidate, b: ChangeCandidate): number {
  if (a.score !== b.score) return b.score - a.score;
  const n = b.focusCount + b.baselineCount - (a.focusCount + a.baselineCount);
  if (n !== 0) return n;
  if ((a.field === null) !== (b.field === null)) return a.field === null ? -1 : 1;
  const key = (c: ChangeCandidate) => [c.field ?? '', String(c.value)] as const;
  const [af, av] = key(a);
  const [bf, bv] = key(b);
  return af < bf ? -1 : af > bf ? 1 : av < bv ? -1 : av > bv ? 1 : 0;
}

/**
 * A changes plan in three or four statements: the focus window's fields (the default
 * fields and their types), every candidate's counts in both windows (one statement), then
 * the listed patterns' newest events in the focus window and, for those gone, in the
 * baseline's.
 */
export async function executeChanges<S>(
  dialect: PlanDialect<S>,
  run: Driver<S>,
  plan: ChangesPlan,
  opts: ExecOptions,
): Promise<ChangesResult> {
  const plain = opts.signal ? { signal: opts.signal } : {};
  const presence = needsPresence(plan) ? await fieldPresence(dialect, run, plan, plain) : null;
  const fields = plan.fields ?? examinedFields(presence as FieldPresence);
  const numberFields = new Set(presence?.fields.filter((f) => f.number).map((f) => f.name));
  const { rows } = await run(dialect.changeCounts({ ...plan, fields }), opts);
  let focusTotal = 0;
  let baselineTotal = 0;
  const candidates: ChangeCandidate[] = [];
  // A value among the most common of both windows may come twice (ClickHouse's two lists).
  const seen = new Set<string>();
  for (const r of rows) {
    const k = Number(r.k);
    const f = Number(r.f);
    const b = Number(r.b);
    if (k < 0) {
      focusTotal = f;
      baselineTotal = b;
      continue;
    }
    const text = String(r.v);
    const key = `${k}\u0000${text}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const field = k === 0 ? null : (fields[k - 1] as string);
    if (field !== null && isComposite(text)) continue;
    candidates.push({
      field,
      value: field === null ? text : typed(field, text, numberFields),
      focusCount: f,
      baselineCount: b,
      score: 0,
    });
  }
  const tf = seconds(plan.range);
  const tb = seconds(plan.baseline);
  const listed: ChangeCandidate[] = [];
  for (const c of candidates) {
    // Held by every event of both windows: it only restates the totals.
    if (c.focusCount === focusTotal && c.baselineCount === baselineTotal) continue;
    c.score = changeScore(c.focusCount, c.baselineCount, tf, tb);
    if (c.score > 0 && c.score >= plan.minScore) listed.push(c);
  }
  listed.sort(compareChanges);
  const changes = listed.slice(0, plan.n);
  await addSamples(dialect, run, plan, changes, plain);
  return { focusTotal, baselineTotal, fields, tested: candidates.length, changes };
}

/** Each listed pattern's newest readable events: in the focus window, or the baseline's when gone. */
async function addSamples<S>(
  dialect: PlanDialect<S>,
  run: Driver<S>,
  plan: ChangesPlan,
  changes: ChangeCandidate[],
  opts: ExecOptions,
): Promise<void> {
  const patterns = changes.filter((c) => c.field === null);
  const sets = [
    { range: plan.range, items: patterns.filter((c) => c.focusCount > 0) },
    { range: plan.baseline, items: patterns.filter((c) => c.focusCount === 0) },
  ];
  await Promise.all(
    sets.map(async ({ range, items }) => {
      if (!items.length) return;
      const ids = items.map((c) => String(c.value));
      const within: PatternsPlan = {
        kind: 'patterns',
        filter: and(plan.filter, cond('pattern_id', 'in', ids)),
        range,
        scope: plan.scope,
        n: ids.length,
        buckets: 1,
      };
      const { rows } = await run(dialect.patternSamples(within, ids), opts);
      const byId = new Map(items.map((c) => [String(c.value), c]));
      for (const c of items) c.samples = [];
      for (const r of rows) {
        const c = byId.get(String(r.v));
        if (c?.samples && c.samples.length < SAMPLES)
          c.samples.push({
            evId: String(r.ev_id),
            ts: Number(r.ts),
            message: r.message == null ? null : String(r.message),
          });
      }
    }),
  );
}
