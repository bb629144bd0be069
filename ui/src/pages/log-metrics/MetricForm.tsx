import { useCallback, useEffect, useState } from 'react';
import { type Answer, api, isAbort } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Check, Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner, Notice } from '../../components/feedback';
import { type Action, useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { Link } from '../../router';
import { BackfillProgress, useBackfill } from './Backfill';
import { KINDS, type LogMetric, type MetricKind, metricHref } from './log-metric';
import { MetricPreview, useMetricPreview } from './MetricPreview';
import { metricFormProblems } from './metric-checks';
import './log-metrics.css';

/** The form's fields as the API names them, with their labels (for the alert naming them). */
const FIELDS = [
  ['name', 'Name'],
  ['description', 'Description'],
  ['query', 'Query'],
  ['kind', 'Kind'],
  ['field', 'Field'],
  ['quantiles', 'Quantiles'],
  ['labels', 'Labels'],
  ['resolution_seconds', 'Resolution'],
  ['retention_days', 'Retention (days)'],
  ['max_series', 'Max series'],
  ['shared_with', 'Shared with everyone'],
] as const;
type FieldName = (typeof FIELDS)[number][0];

/** A field's 400 messages: under its name, or one of its items (`labels.2`), or a part (`shared_with.teams`). */
function errorOf(act: Action, name: FieldName): string | null {
  const own = act.fieldError(name);
  if (own) return own;
  for (let i = 0; i < 10; i++) {
    const item = act.fieldError(`${name}.${i}`);
    if (item) return item;
  }
  return name === 'shared_with'
    ? (act.fieldError('shared_with.teams') ?? act.fieldError('shared_with.everyone'))
    : null;
}

const labelOf = (name: FieldName) => FIELDS.find(([n]) => n === name)?.[1] ?? name;

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** A number typed, or the text itself (the API then says what is wrong with it). */
const numberOf = (text: string): number | string => {
  const n = Number(text);
  return text.trim() !== '' && Number.isFinite(n) ? n : text;
};

/**
 * The numeric fields of the events the query matched over the last 24 hours (`/api/fields`,
 * its newest 10,000): offered for "Field", and a field none of them holds is flagged (a
 * metric may name a field its events will hold later). Null until known.
 */
function useNumericFields(query: string, wanted: boolean): string[] | null {
  const [fields, setFields] = useState<string[] | null>(null);
  useEffect(() => {
    if (!wanted) return;
    const ctl = new AbortController();
    const timer = setTimeout(() => {
      const params = new URLSearchParams({ query, time_range: JSON.stringify({ preset: 'last_24_hours' }) });
      api<Answer<'/api/fields'>>(`/api/fields?${params}`, { signal: ctl.signal })
        .then((r) => setFields(r.fields.filter((f) => f.type === 'number').map((f) => f.name)))
        .catch((err) => {
          // A query the server refuses shows at "Query" (the Preview's 400): nothing to offer.
          if (!isAbort(err)) setFields(null);
        });
    }, 400);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [query, wanted]);
  return fields;
}

const formValues = (m: LogMetric | undefined, query: string) => ({
  name: m?.name ?? '',
  description: m?.description ?? '',
  query: m?.query ?? query,
  kind: (m?.kind ?? 'count') as string,
  field: m?.field ?? '',
  quantiles: (m?.quantiles ?? [0.5, 0.9, 0.99]).join(', '),
  labels: (m?.labels ?? []).join(', '),
  resolution: String(m?.resolution_seconds ?? 60),
  retention: String(m?.retention_days ?? 400),
  maxSeries: String(m?.max_series ?? 10_000),
  everyone: m?.shared_with.everyone ?? false,
});

/**
 * "New metric" and "Edit" (a dialog): every field of a log metric, the API's 400 shown at
 * each field and as an alert naming them. After creating one, "Backfill the last 24 hours"
 * starts a backfill and shows its progress.
 */
export function MetricDialog(props: {
  editing?: LogMetric;
  /** The query a new metric starts with (the search page's). */
  query?: string;
  onClose: () => void;
  onSaved?: (m: LogMetric) => void;
}) {
  const { editing, onSaved } = props;
  const form = useForm(() => formValues(editing, props.query ?? ''));
  const v = form.values;
  const act = useAction();
  const [made, setMade] = useState<LogMetric | null>(null);
  const withField = v.kind !== 'count';
  const preview = useMetricPreview({
    query: v.query,
    kind: v.kind as MetricKind,
    field: withField ? v.field : '',
    quantiles: v.kind === 'quantiles' ? list(v.quantiles).map(Number) : [],
    labels: list(v.labels),
    resolution: numberOf(v.resolution),
  });
  /** A field's error: the save's 400, else the preview's (its query's 400 naming the field). */
  const fieldError = (name: FieldName) =>
    errorOf(act, name) ??
    (name === 'query' || name === 'field' || name === 'labels' ? preview.fields[name] : null) ??
    null;
  // What is wrong before saving: the form's own checks (an empty name only keeps "Save"
  // waiting), then what the Preview's query was refused for.
  const waiting: Array<[FieldName, string]> = [
    ...metricFormProblems(v).filter(([name]) => name !== 'name' || v.name !== ''),
    ...(['query', 'field', 'labels'] as const).flatMap((name): Array<[FieldName, string]> => {
      const error = preview.fields[name];
      return error ? [[name, error]] : [];
    }),
  ];
  const numeric = useNumericFields(v.query, withField);
  const unheld = withField && numeric !== null && v.field.trim() !== '' && !numeric.includes(v.field.trim());

  const submit = () =>
    act.run(async () => {
      const m = await api<LogMetric>(editing ? `/api/log-metrics/${editing.id}` : '/api/log-metrics', {
        ...(editing ? { method: 'PATCH' } : {}),
        body: {
          name: v.name.trim(),
          description: v.description,
          query: v.query.trim(),
          kind: v.kind as MetricKind,
          field: withField ? v.field.trim() : null,
          quantiles: v.kind === 'quantiles' ? list(v.quantiles).map(numberOf) : null,
          labels: list(v.labels),
          resolution_seconds: numberOf(v.resolution),
          retention_days: numberOf(v.retention),
          max_series: numberOf(v.maxSeries),
          shared_with: { teams: editing?.shared_with.teams ?? [], everyone: v.everyone },
        },
      });
      onSaved?.(m);
      if (editing) props.onClose();
      else setMade(m);
    });

  const marked = FIELDS.filter(([name]) => errorOf(act, name));
  const title = editing ? `Edit metric “${editing.name}”` : 'New metric';
  const off = made !== null;
  return (
    <Dialog label={title} onClose={props.onClose}>
      <Form className="metric-form" onSubmit={submit}>
        <h2>{title}</h2>
        <div className="metric-fields">
          <Field
            label="Name"
            error={errorOf(act, 'name')}
            hint="Its name in Prometheus: letters, digits and _."
          >
            <input required maxLength={100} spellCheck={false} disabled={off} {...form.text('name')} />
          </Field>
          <Field label="Description" error={errorOf(act, 'description')}>
            <input maxLength={1000} placeholder="Optional" disabled={off} {...form.text('description')} />
          </Field>
          <Field
            label="Query"
            error={fieldError('query')}
            hint="The events it counts, without pipes or stream: (empty: every event)."
          >
            <input
              className="mono"
              spellCheck={false}
              autoComplete="off"
              disabled={off}
              {...form.text('query')}
            />
          </Field>
          <div className="metric-row">
            <Field label="Kind" error={errorOf(act, 'kind')}>
              <Select options={KINDS} disabled={off} {...form.text('kind')} />
            </Field>
            {withField && (
              <Field
                label="Field"
                error={fieldError('field')}
                hint={
                  unheld
                    ? 'No event of the last 24 hours that the query matches holds a number here: it counts nothing until one does.'
                    : 'A numeric field.'
                }
              >
                <input
                  required
                  spellCheck={false}
                  list="metric-numeric-fields"
                  disabled={off}
                  {...form.text('field')}
                />
              </Field>
            )}
            {withField && (
              <datalist id="metric-numeric-fields">
                {(numeric ?? []).map((name) => (
                  <option key={name} value={name} />
                ))}
              </datalist>
            )}
            {v.kind === 'quantiles' && (
              <Field
                label="Quantiles"
                error={errorOf(act, 'quantiles')}
                hint="Comma-separated, between 0 and 1."
              >
                <input spellCheck={false} disabled={off} {...form.text('quantiles')} />
              </Field>
            )}
          </div>
          <Field
            label="Labels"
            error={fieldError('labels')}
            hint="Up to 5 fields, comma-separated: a series per their values."
          >
            <input spellCheck={false} autoComplete="off" disabled={off} {...form.text('labels')} />
          </Field>
          <div className="metric-row">
            <Field
              label="Resolution"
              error={errorOf(act, 'resolution_seconds')}
              hint="Seconds, dividing 3600."
            >
              <input type="number" min={10} max={3600} disabled={off} {...form.text('resolution')} />
            </Field>
            <Field label="Retention (days)" error={errorOf(act, 'retention_days')}>
              <input type="number" min={1} max={3650} disabled={off} {...form.text('retention')} />
            </Field>
            <Field label="Max series" error={errorOf(act, 'max_series')}>
              <input type="number" min={1} disabled={off} {...form.text('maxSeries')} />
            </Field>
          </div>
          <Check label="Shared with everyone" disabled={off} {...form.check('everyone')} />
          {editing && (
            <p className="muted small-text">
              A new query, kind, field, quantiles, labels or resolution starts the metric again from now.
            </p>
          )}
        </div>
        <MetricPreview preview={preview} maxSeries={numberOf(v.maxSeries)} disabled={off} />
        <div className="metric-form-foot">
          <ErrorBanner
            error={
              marked.length > 0
                ? `The metric was not saved: ${marked.map(([name, label]) => `${label}: ${errorOf(act, name)}`).join(' ')}`
                : (act.error ??
                  (waiting.length > 0 && !made
                    ? `Not ready to save: ${waiting.map(([name, why]) => `${labelOf(name)}: ${why}`).join(' ')}`
                    : null))
            }
          />
          {made && <Created metric={made} />}
          <FormActions
            submit={made ? undefined : editing ? 'Save changes' : 'Create metric'}
            busy={act.busy}
            disabled={!v.name.trim() || waiting.length > 0}
            onCancel={props.onClose}
            cancel={made ? 'Close' : 'Cancel'}
          />
        </div>
      </Form>
    </Dialog>
  );
}

/** Once created: a link to it, and the offer to backfill the last 24 hours with the job's progress. */
function Created({ metric }: { metric: LogMetric }) {
  const noop = useCallback(() => {}, []);
  const backfill = useBackfill(metric.id, noop);
  return (
    <div className="metric-created">
      <Notice>
        Created the metric <Link to={metricHref(metric.id)}>{metric.name}</Link>: it counts from now on.
      </Notice>
      {!backfill.job && (
        <button
          type="button"
          className="secondary"
          disabled={backfill.act.busy}
          onClick={() => backfill.lastDay()}
        >
          Backfill the last 24 hours
        </button>
      )}
      <BackfillProgress job={backfill.job} />
      <ErrorBanner error={backfill.act.error} />
    </div>
  );
}
