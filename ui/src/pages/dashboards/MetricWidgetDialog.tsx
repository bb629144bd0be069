import { METRIC_FIGURES } from '@shared/metric-figures';
import { TIME_PRESETS } from '@shared/time-presets';
import type { Paginated } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner } from '../../components/feedback';
import { useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { useApi } from '../../useApi';
import type { LogMetric } from '../log-metrics/log-metric';
import type { WidgetChanges } from './dialogs';
import type { Widget } from './grid';

/** The kinds a Metric widget is drawn as (the API refuses the others). */
const METRIC_KINDS = [
  { value: 'line', label: 'Line chart' },
  { value: 'area', label: 'Area chart' },
  { value: 'bar', label: 'Bar chart' },
  { value: 'number', label: 'Number' },
  { value: 'table', label: 'Table' },
] as const;

/** The select's value for a time range that is no preset (a fixed one): it is kept. */
const AS_SAVED = '';

/**
 * A Metric widget's title, metric (those you may see), time range, chart and figure
 * (`visualization.options.y`: the kind's value, or events, count, sum, min, max, avg or
 * a quantile the metric keeps). Its other parameters (step, labels, filter) stay.
 */
export function MetricWidgetDialog(props: {
  widget: Widget;
  onSave: (changes: WidgetChanges) => Promise<void>;
  onClose: () => void;
}) {
  const w = props.widget;
  const range = w.query.params.time_range as { preset?: string } | undefined;
  const y = w.visualization.options?.y;
  const form = useForm(() => ({
    title: w.title,
    metric: String(w.query.params.metric_id ?? ''),
    preset: typeof range?.preset === 'string' ? range.preset : AS_SAVED,
    kind: w.visualization.kind as string,
    y: typeof y === 'string' ? y : 'value',
  }));
  const list = useApi<Paginated<LogMetric>>('/api/log-metrics?page_size=200&ordering=name');
  const metrics = list.data?.results ?? [];
  const chosen = metrics.find((m) => String(m.id) === form.values.metric);
  const metricOptions = metrics.map((m) => ({ value: m.id, label: m.name }));
  // A metric since deleted or no longer shared stays chosen, by its id.
  if (!chosen && form.values.metric)
    metricOptions.unshift({ value: Number(form.values.metric), label: `Metric #${form.values.metric}` });
  const presets = TIME_PRESETS.map((p) => ({ value: p.value, label: p.label }));
  const rangeOptions =
    form.values.preset === AS_SAVED ? [{ value: AS_SAVED, label: 'As saved' }, ...presets] : presets;
  const figures = [
    ...METRIC_FIGURES.map((f) => ({ value: f, label: f === 'value' ? `value (the kind's figure)` : f })),
    ...(chosen?.quantiles ?? []).map((q) => ({ value: String(q), label: `quantile ${q}` })),
  ];
  const act = useAction();
  const submit = () =>
    act.run(() =>
      props.onSave({
        title: form.values.title.trim(),
        query: {
          type: 'Metric',
          params: {
            ...w.query.params,
            metric_id: Number(form.values.metric),
            ...(form.values.preset === AS_SAVED ? {} : { time_range: { preset: form.values.preset } }),
          },
        },
        visualization: {
          kind: form.values.kind as Widget['visualization']['kind'],
          options: { ...(w.visualization.options ?? {}), y: form.values.y },
        },
      }),
    );
  const label = `Edit “${w.title}”`;
  return (
    <Dialog label={label} onClose={props.onClose}>
      <Form title={label} className="" onSubmit={submit}>
        <Field label="Title" error={act.fieldError('title')}>
          <input required maxLength={200} {...form.text('title')} />
        </Field>
        <Field label="Metric" error={act.fieldError('query.params.metric_id')}>
          <Select
            value={form.values.metric}
            options={metricOptions}
            onChange={(e) => form.set('metric', e.target.value)}
          />
        </Field>
        <Field label="Time range" error={act.fieldError('query.params.time_range')}>
          <Select
            value={form.values.preset}
            options={rangeOptions}
            onChange={(e) => form.set('preset', e.target.value)}
          />
        </Field>
        <Field label="Chart" error={act.fieldError('visualization.kind')}>
          <Select
            value={form.values.kind}
            options={METRIC_KINDS}
            onChange={(e) => form.set('kind', e.target.value)}
          />
        </Field>
        <Field
          label="Figure"
          hint="What each point and total shows; a number sums events, count and sum over the series."
          error={act.fieldError('visualization.options.y')}
        >
          <Select value={form.values.y} options={figures} onChange={(e) => form.set('y', e.target.value)} />
        </Field>
        <ErrorBanner error={act.error ?? list.error} />
        <FormActions submit="Save" busy={act.busy} onCancel={props.onClose} />
      </Form>
    </Dialog>
  );
}
