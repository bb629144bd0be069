import { type Static, Type } from 'typebox';
import { changeDirection, examinable, MAX_EXAMINED, perMinute, round3 } from '../../core/change-score.js';
import { fieldError } from '../../errors/errors.js';
import type { ChangeCandidate, ChangesResult, TimeWindow } from '../../event-store/query-plan.js';
import { resolveTimeRange } from '../time-range.js';
import { type CommonParamValues, FieldName, type QueryTypeDef, withCommon } from './query-type.js';

/** A window of Explain is 1 s to 31 days. */
export const MAX_WINDOW_SECONDS = 2_678_400;
const WEEK_MS = 604_800_000;

const BaselineSchema = Type.Union(
  [
    Type.Object(
      { ts_from: Type.Integer({ description: 'Unix seconds' }), ts_to: Type.Integer() },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        preset: Type.Union([Type.Literal('previous'), Type.Literal('same_time_last_week')], {
          description:
            '`previous`: as long as the focus, just before it; `same_time_last_week`: the focus 604,800 s earlier.',
        }),
      },
      { additionalProperties: false },
    ),
  ],
  { default: { preset: 'previous' } },
);
type Baseline = Static<typeof BaselineSchema>;

export interface ExplainParams extends CommonParamValues {
  baseline: Baseline;
  fields?: string[];
  n: number;
  min_score: number;
}

/** The baseline window of a focus window. */
export function baselineOf(b: Baseline, focus: TimeWindow): TimeWindow {
  if ('ts_from' in b) return { fromMs: b.ts_from * 1000, toMs: b.ts_to * 1000 };
  if (b.preset === 'same_time_last_week')
    return { fromMs: focus.fromMs - WEEK_MS, toMs: focus.toMs - WEEK_MS };
  return { fromMs: 2 * focus.fromMs - focus.toMs, toMs: focus.fromMs };
}

const longerThanAMonth = (w: TimeWindow) => w.toMs - w.fromMs > MAX_WINDOW_SECONDS * 1000;

/** What the schema cannot say (docs/api/explain.md "Errors"): a 400 naming the parameter. */
export function checkExplain(p: ExplainParams, nowMs: number): void {
  const focus = resolveTimeRange(p.time_range, nowMs);
  if (longerThanAMonth(focus))
    throw fieldError('params.time_range', 'The focus window is longer than 31 days.');
  if (focus.toMs - focus.fromMs < 1000)
    throw fieldError('params.time_range', 'The focus window is shorter than 1 s.');
  const b = p.baseline;
  if ('ts_from' in b && b.ts_from >= b.ts_to)
    throw fieldError('params.baseline', 'ts_from must be before ts_to.');
  const base = baselineOf(b, focus);
  if (longerThanAMonth(base))
    throw fieldError('params.baseline', 'The baseline window is longer than 31 days.');
  if (base.toMs - base.fromMs < 1000)
    throw fieldError('params.baseline', 'The baseline window is shorter than 1 s.');
  if (base.fromMs < focus.toMs && focus.fromMs < base.toMs)
    throw fieldError('params.baseline', 'The baseline window overlaps the focus window.');
  const never = (p.fields ?? []).filter((f) => !examinable(f));
  if (never.length) throw fieldError('params.fields', `Never examined: ${never.join(', ')}.`);
}

/** Words the query language reads as operators. */
const KEYWORDS = new Set(['AND', 'OR', 'NOT', 'TO']);
const BARE = /^[A-Za-z0-9_][A-Za-z0-9_.@-]*$/;

/** A value as a query-language term compares it: numbers bare, plain words bare, the rest quoted. */
export function termOf(field: string, value: string | number): string {
  if (typeof value === 'number') return `${field}:${value}`;
  const bare = BARE.test(value) && !KEYWORDS.has(value.toUpperCase()) && Number.isNaN(Number(value));
  return `${field}:${bare ? value : `"${value.replace(/[\\"]/g, '\\$&')}"`}`;
}

const seconds = (ms: number) => ms / 1000;
const windowJson = (w: TimeWindow) => ({ ts_from: seconds(w.fromMs), ts_to: seconds(w.toMs) });

const Window = Type.Object({ ts_from: Type.Number(), ts_to: Type.Number() });
const Counts = {
  term: Type.String({ description: 'The query-language term selecting it.' }),
  focus_count: Type.Integer(),
  baseline_count: Type.Integer(),
  focus_rate: Type.Number({ description: 'Events a minute in the focus window.' }),
  baseline_rate: Type.Number(),
  ratio: Type.Union([Type.Number(), Type.Null()], {
    description: 'focus_rate / baseline_rate; null when none before.',
  }),
  direction: Type.Union([
    Type.Literal('new'),
    Type.Literal('gone'),
    Type.Literal('up'),
    Type.Literal('down'),
  ]),
  score: Type.Number({ description: 'G-test score (χ², 1 degree of freedom).' }),
};

/**
 * Explain (docs/api/explain.md): which patterns and field values account for the difference between
 * the focus window (`time_range`) and a baseline, ranked by the G-test score of their
 * counts with the windows' lengths as exposure.
 */
export const Explain: QueryTypeDef<ExplainParams, ChangesResult> = {
  name: 'Explain',
  description:
    'What changed between the focus window (`time_range`) and a baseline: the patterns and field values whose rate differs most, by the G-test score, with counts, rates, ratio, direction and samples.',
  params: withCommon({
    baseline: BaselineSchema,
    fields: Type.Optional(
      Type.Array(FieldName('A field to examine.'), {
        maxItems: MAX_EXAMINED,
        description: `Fields to examine (0–${MAX_EXAMINED}; [] patterns only); default: host, app, severity, src_ip, user, status, then fields in ≥ 1 % of the focus window's events.`,
      }),
    ),
    n: Type.Integer({ minimum: 1, maximum: 1000, default: 20 }),
    min_score: Type.Number({ minimum: 0, default: 20 }),
  }),
  results: Type.Object({
    focus: Window,
    baseline: Window,
    focus_total: Type.Integer(),
    baseline_total: Type.Integer(),
    fields: Type.Array(Type.String(), { description: 'The fields examined.' }),
    tested: Type.Integer({ description: 'Candidates examined.' }),
    min_score: Type.Number(),
    changes: Type.Array(
      Type.Union([
        Type.Object({
          kind: Type.Literal('pattern'),
          pattern_id: Type.String(),
          template: Type.String(),
          ...Counts,
          samples: Type.Array(
            Type.Object({
              ev_id: Type.String(),
              ts: Type.Number(),
              message: Type.Union([Type.String(), Type.Null()]),
            }),
          ),
        }),
        Type.Object({
          kind: Type.Literal('field'),
          field: Type.String(),
          value: Type.Union([Type.String(), Type.Number()]),
          ...Counts,
        }),
      ]),
    ),
  }),
  plan: (p, filter, range) => ({
    kind: 'changes',
    filter,
    range,
    baseline: baselineOf(p.baseline, range),
    // A field named twice is examined once.
    fields: p.fields ? [...new Set(p.fields)] : null,
    n: p.n,
    minScore: p.min_score,
  }),
  slicing: () => null,
  merge: (_acc, part) => part,
  present: (r, p, { window }) => {
    const baseline = baselineOf(p.baseline, window);
    const tf = seconds(window.toMs - window.fromMs);
    const tb = seconds(baseline.toMs - baseline.fromMs);
    const change = (c: ChangeCandidate) => {
      const f = c.focusCount;
      const b = c.baselineCount;
      const counts = {
        term: c.field === null ? termOf('pattern_id', c.value) : termOf(c.field, c.value),
        focus_count: f,
        baseline_count: b,
        focus_rate: round3(perMinute(f, tf)),
        baseline_rate: round3(perMinute(b, tb)),
        ratio: b === 0 ? null : round3(perMinute(f, tf) / perMinute(b, tb)),
        direction: changeDirection(f, b, tf, tb),
        score: round3(c.score),
      };
      if (c.field !== null) return { kind: 'field' as const, field: c.field, value: c.value, ...counts };
      return {
        kind: 'pattern' as const,
        pattern_id: String(c.value),
        template: c.template ?? '',
        ...counts,
        samples: (c.samples ?? []).map((s) => ({ ev_id: s.evId, ts: seconds(s.ts), message: s.message })),
      };
    };
    return {
      focus: windowJson(window),
      baseline: windowJson(baseline),
      focus_total: r.focusTotal,
      baseline_total: r.baselineTotal,
      fields: r.fields,
      tested: r.tested,
      min_score: p.min_score,
      changes: r.changes.map(change),
    };
  },
};
