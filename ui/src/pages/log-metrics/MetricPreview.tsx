import { useEffect, useRef, useState } from 'react';
import { ApiError, errorText, type GenericQuery, isAbort, runQuery, type TimelineResults } from '../../api';
import { ErrorBanner, Notice } from '../../components/feedback';
import { formatCount } from '../../format';
import { TimeChart } from '../dashboards/charts/time';
import { chartStep, eventsText, type MetricKind } from './log-metric';
import '../dashboards/dashboards.css';

/** What a metric counts, as the form has it: what a preview is computed for. */
export interface PreviewInput {
  query: string;
  kind: MetricKind;
  field: string;
  quantiles: readonly number[];
  labels: readonly string[];
  /** Seconds; the form's text when it is no number (the preview then steps by a minute). */
  resolution: number | string;
}

/** The form's fields a query's 400 names (`params.query`, `params.group_by.1`, `params.metrics.1.field`). */
export type PreviewField = 'query' | 'field' | 'labels';
const FIELD_LABELS: Record<PreviewField, string> = { query: 'Query', field: 'Field', labels: 'Labels' };

const SPANS = [
  { seconds: 3600, label: 'Last hour', phrase: 'in the last hour' },
  { seconds: 86_400, label: 'Last 24 hours', phrase: 'in the last 24 hours' },
] as const;
type Span = (typeof SPANS)[number];

/** Top label tuples listed (and how many are read to tell the number of series). */
const TOP = 10;
const TUPLES_READ = 1000;
/** A change of the form after a first preview computes it again after this pause (ms). */
const DEBOUNCE_MS = 600;

/** The Summary metrics answering a kind's figure: Summary's key and the column's heading. */
function figuresOf(p: PreviewInput): { op: string; key: string; heading: string }[] {
  const field = p.field.trim();
  switch (p.kind) {
    case 'count':
      return [];
    case 'sum':
    case 'avg':
    case 'min':
    case 'max':
      return [{ op: p.kind, key: `${p.kind}_${field}`, heading: `${p.kind} of ${field}` }];
    case 'quantiles':
      // Summary answers three quantiles: the metric's others are not previewed.
      return [
        { q: 0.5, op: 'p50' },
        { q: 0.9, op: 'p90' },
        { q: 0.99, op: 'p99' },
      ]
        .filter(({ q }) => p.quantiles.includes(q))
        .map(({ q, op }) => ({ op, key: `${op}_${field}`, heading: `${q} quantile of ${field}` }));
    default:
      return p.kind satisfies never;
  }
}

interface SummaryResults {
  totals: Record<string, number | null>;
  details: ({ group: Record<string, unknown> } & Record<string, unknown>)[];
}

/** A preview computed: what for, the events per step and the top label tuples. */
interface Preview {
  input: PreviewInput;
  span: Span;
  step: number;
  timeline: GenericQuery<TimelineResults>;
  summary: SummaryResults;
}

interface State {
  busy: boolean;
  preview: Preview | null;
  /** A 400's messages at the form's fields. */
  fields: Partial<Record<PreviewField, string>>;
  error: string | null;
}

const fieldOf = (key: string): PreviewField | null =>
  key === 'params.query'
    ? 'query'
    : key.startsWith('params.group_by')
      ? 'labels'
      : /^params\.metrics\.\d+\.field$/.test(key)
        ? 'field'
        : null;

/** Both queries over the same range: `ts_to` the end of the current step, the range whole steps. */
async function compute(input: PreviewInput, span: Span, signal: AbortSignal): Promise<Preview> {
  const resolution = typeof input.resolution === 'number' && input.resolution > 0 ? input.resolution : 60;
  const step = chartStep(resolution, span.seconds);
  const to = Math.ceil(Date.now() / 1000 / step) * step;
  const common = {
    query: input.query.trim(),
    time_range: { ts_from: to - Math.ceil(span.seconds / step) * step, ts_to: to },
  };
  const field = input.field.trim();
  const final = async <R,>(type: string, params: Record<string, unknown>) => {
    const q = await runQuery<R>({ type, params: { ...common, ...params } }, { signal, onUpdate: () => {} });
    if (q.status === 'ERROR') throw new Error(q.error ?? `The ${type} query failed.`);
    return q;
  };
  const [timeline, summary] = await Promise.all([
    final<TimelineResults>('Timeline', { interval: `${step}s` }),
    final<SummaryResults>('Summary', {
      group_by: input.labels,
      metrics: [{ op: 'count' }, ...figuresOf(input).map((f) => ({ op: f.op, field }))],
      n: TUPLES_READ,
    }),
  ]);
  return {
    input,
    span,
    step,
    timeline,
    summary: { totals: summary.results.totals ?? {}, details: summary.results.details ?? [] },
  };
}

/**
 * The form's preview: nothing until "Preview" is pressed, then the Timeline and Summary of
 * the form's query over the range chosen, computed again (debounced) as the form changes.
 * A 400 naming the query, the labels or the field is given at that field (`fields`).
 */
export function useMetricPreview(input: PreviewInput) {
  const [span, setSpan] = useState<Span>(SPANS[0]);
  const [asked, setAsked] = useState(0);
  const [state, setState] = useState<State>({ busy: false, preview: null, fields: {}, error: null });
  const sig = JSON.stringify(input);
  // A press or another range computes at once; a change of the form after a pause.
  const last = useRef({ asked: 0, span });

  useEffect(() => {
    if (!asked) return;
    const now = asked !== last.current.asked || span !== last.current.span;
    last.current = { asked, span };
    const ctl = new AbortController();
    const timer = setTimeout(
      () => {
        const wanted = JSON.parse(sig) as PreviewInput;
        const needsField = wanted.kind !== 'count' && !wanted.field.trim();
        if (needsField) {
          setState({ busy: false, preview: null, fields: {}, error: null });
          return;
        }
        setState((s) => ({ ...s, busy: true }));
        compute(wanted, span, ctl.signal)
          .then((preview) => setState({ busy: false, preview, fields: {}, error: null }))
          .catch((err: unknown) => {
            if (isAbort(err) || ctl.signal.aborted) return;
            const fields: State['fields'] = {};
            if (err instanceof ApiError && err.status === 400)
              for (const [key, messages] of Object.entries(err.errors ?? {})) {
                const f = fieldOf(key);
                if (f) fields[f] = [fields[f], ...messages].filter(Boolean).join(' ');
              }
            const named = Object.keys(fields).length > 0;
            setState({ busy: false, preview: null, fields, error: named ? null : errorText(err) });
          });
      },
      now ? 0 : DEBOUNCE_MS,
    );
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [asked, sig, span]);

  return {
    ...state,
    span,
    asked: asked > 0,
    /** Computes it now (again). */
    run: () => setAsked((n) => n + 1),
    setSpan: (seconds: number) => setSpan(SPANS.find((s) => s.seconds === seconds) ?? SPANS[0]),
  };
}
export type MetricPreviewState = ReturnType<typeof useMetricPreview>;

const labelText = (v: unknown) =>
  v === null || v === undefined || v === '' ? '(none)' : typeof v === 'string' ? v : JSON.stringify(v);
const figureText = (v: unknown) => (typeof v === 'number' ? formatCount(v) : '–');
const stepText = (s: number) =>
  s % 3600 === 0 ? `${s / 3600} h` : s % 60 === 0 ? `${s / 60} min` : `${s} s`;

/**
 * The form's region "Preview": the range, the button, what it is computed from, then the
 * matching events per step as a chart and the top label tuples with the kind's figure.
 */
export function MetricPreview({
  preview,
  maxSeries,
  disabled,
}: {
  preview: MetricPreviewState;
  /** The form's "Max series": past it, the preview says the rest would count as `__other__`. */
  maxSeries: number | string;
  disabled?: boolean;
}) {
  const p = preview.preview;
  const named = Object.entries(preview.fields) as [PreviewField, string][];
  return (
    <section aria-labelledby="metric-preview-title" className="metric-preview" aria-busy={preview.busy}>
      <div className="metric-preview-head">
        <h3 id="metric-preview-title">Preview</h3>
        <select
          aria-label="Preview range"
          value={preview.span.seconds}
          disabled={disabled}
          onChange={(e) => preview.setSpan(Number(e.target.value))}
        >
          {SPANS.map((s) => (
            <option key={s.seconds} value={s.seconds}>
              {s.label}
            </option>
          ))}
        </select>
        <button type="button" className="secondary" disabled={disabled} onClick={preview.run}>
          Preview
        </button>
      </div>
      <p className="muted small-text">
        What the metric would count, computed now from the stored events you may read, as a backfill would
        count them. Nothing is counted until the metric is saved.
      </p>
      <Notice className="small-text">
        {preview.busy
          ? 'Computing the preview…'
          : !preview.asked
            ? ''
            : named.length || preview.error
              ? ''
              : p
                ? summaryLine(p, maxSeries)
                : 'Give the field to preview the metric.'}
      </Notice>
      <ErrorBanner
        error={
          named.length
            ? `No preview: ${named.map(([f, m]) => `${FIELD_LABELS[f]}: ${m}`).join(' ')}`
            : preview.error
        }
      />
      {p && named.length === 0 && !preview.error && <PreviewResults preview={p} />}
    </section>
  );
}

/** "5 events in the last hour, 3 series; sum of ms: 35." */
function summaryLine(p: Preview, maxSeries: number | string): string {
  const events = p.summary.totals.count ?? 0;
  const tuples = p.summary.details.length;
  const folded =
    typeof maxSeries === 'number' && tuples > maxSeries
      ? ` (past Max series, ${formatCount(maxSeries)}, the others would count as __other__)`
      : '';
  const series =
    p.input.labels.length === 0
      ? ''
      : `, ${tuples >= TUPLES_READ ? `${formatCount(TUPLES_READ)} or more` : formatCount(tuples)} series${folded}`;
  const figures = figuresOf(p.input)
    .map((f) => `${f.heading}: ${figureText(p.summary.totals[f.key])}`)
    .join(', ');
  return `${eventsText(events)} ${p.span.phrase}${series}${figures ? `; ${figures}` : ''}.`;
}

function PreviewResults({ preview: p }: { preview: Preview }) {
  const figures = figuresOf(p.input);
  const labels = p.input.labels;
  const rows = p.summary.details.slice(0, TOP);
  return (
    <>
      <div className="metric-preview-chart">
        <TimeChart
          data={{ results: p.timeline.results as Record<string, unknown> }}
          kind="bar"
          stacked={false}
          title={`Matching events per ${stepText(p.step)}`}
        />
      </div>
      {labels.length > 0 && (
        <div className="table-wrap">
          <table className="list metric-preview-table">
            <caption>
              {p.summary.details.length > TOP ? `The ${TOP} busiest label values` : 'Label values'}
            </caption>
            <thead>
              <tr>
                {labels.map((l) => (
                  <th key={l} scope="col">
                    {l}
                  </th>
                ))}
                <th scope="col" className="num">
                  Events
                </th>
                {figures.map((f) => (
                  <th key={f.key} scope="col" className="num">
                    {f.heading}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={JSON.stringify(labels.map((l) => r.group[l] ?? null))}>
                  {labels.map((l) => (
                    <td key={l}>{labelText(r.group[l])}</td>
                  ))}
                  <td className="num">{figureText(r.count)}</td>
                  {figures.map((f) => (
                    <td key={f.key} className="num">
                      {figureText(r[f.key])}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {figures.length > 0 && (
        <p className="muted small-text">
          Numbers written as text (“12”) count here but not in the metric.
          {p.input.kind === 'quantiles' && ' Quantiles other than 0.5, 0.9 and 0.99 are not previewed.'}
        </p>
      )}
    </>
  );
}
