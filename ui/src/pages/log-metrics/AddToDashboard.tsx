import { api } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner } from '../../components/feedback';
import { useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { navigate } from '../../router';
import { useDashboards } from '../reports/ReportsPage';
import type { LogMetric } from './log-metric';

/** The select's value for a dashboard made here. */
const NEW = 'new';

/** The widget a metric is added as: a line chart of its series over the last 24 h, titled with its name. */
export const metricWidget = (m: Pick<LogMetric, 'id' | 'name'>) => ({
  title: m.name,
  query: { type: 'Metric', params: { metric_id: m.id, time_range: { preset: 'last_24_hours' } } },
  visualization: { kind: 'line', options: {} },
});

/**
 * "Add to dashboard" of a metric: one of your dashboards, or a new one named here; the
 * widget (metricWidget) is added and the dashboard opened. A refusal stays in the dialog.
 */
export function AddToDashboardDialog(props: { metric: LogMetric; onClose: () => void }) {
  const m = props.metric;
  const form = useForm(() => ({ picked: '', name: m.name }));
  const { list, boards, chosen, options } = useDashboards(form.values.picked);
  // No dashboard yet: a new one is the only choice.
  const target = list.data && boards.length === 0 ? NEW : chosen;
  const act = useAction();
  const submit = () =>
    act.run(async () => {
      let id: number;
      if (target === NEW)
        id = (
          await api<{ id: number }>('/api/dashboards', {
            body: { title: form.values.name.trim(), widgets: [metricWidget(m)] },
          })
        ).id;
      else {
        id = Number(target);
        await api(`/api/dashboards/${id}/widgets`, { body: metricWidget(m) });
      }
      navigate(`/dashboards/${id}`);
    });
  const label = `Add “${m.name}” to a dashboard`;
  return (
    <Dialog label={label} onClose={props.onClose}>
      <Form title={label} className="" onSubmit={submit}>
        <p className="muted">A line chart of the metric's series over the last 24 hours.</p>
        {list.data ? (
          <Field label="Dashboard">
            <Select
              value={target}
              options={[...options, { value: NEW, label: 'New dashboard…' }]}
              onChange={(e) => form.set('picked', e.target.value)}
            />
          </Field>
        ) : (
          !list.error && <p className="muted">Loading your dashboards…</p>
        )}
        {target === NEW && (
          <Field label="Name of the new dashboard" error={act.fieldError('title')}>
            <input required maxLength={200} {...form.text('name')} />
          </Field>
        )}
        <ErrorBanner error={act.error ?? list.error} />
        <FormActions
          submit="Add widget"
          busy={act.busy}
          disabled={!list.data || !target}
          onCancel={props.onClose}
        />
      </Form>
    </Dialog>
  );
}
