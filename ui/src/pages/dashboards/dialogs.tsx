import { type ReactNode, useEffect, useRef } from 'react';
import { Dialog } from '../../components/Dialog';
import { Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner } from '../../components/feedback';
import { useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import type { VisualizationKind } from './charts';
import type { Widget } from './grid';

/**
 * Asks once before a change that cannot be undone (removing a widget, deleting the
 * dashboard): the question, what it does, the action named and Cancel, which has the
 * focus (Enter alone does nothing it did not mean). A failure stays in the dialog.
 */
export function ConfirmDialog(props: {
  label: string;
  children: ReactNode;
  confirm: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}) {
  const act = useAction();
  const cancel = useRef<HTMLButtonElement>(null);
  // After the dialog's own effect (showModal, which focuses its first button).
  useEffect(() => cancel.current?.focus(), []);
  return (
    <Dialog label={props.label} onClose={props.onClose}>
      <div className="dash-dialog">
        <h2>{props.label}</h2>
        {props.children}
        <ErrorBanner error={act.error} />
        <div className="form-actions">
          <button
            type="button"
            className="danger"
            disabled={act.busy}
            onClick={() => void act.run(props.onConfirm)}
          >
            {props.confirm}
          </button>
          <button ref={cancel} type="button" className="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </div>
    </Dialog>
  );
}

/** The dashboard's title and description (PATCH /api/dashboards/:id). */
export function RenameDialog(props: {
  title: string;
  description: string;
  onSave: (fields: { title: string; description: string }) => Promise<void>;
  onClose: () => void;
}) {
  const form = useForm(() => ({ title: props.title, description: props.description }));
  const act = useAction();
  const submit = () =>
    act.run(() => props.onSave({ title: form.values.title.trim(), description: form.values.description }));
  return (
    <Dialog label="Rename dashboard" onClose={props.onClose}>
      <Form title="Rename dashboard" className="" onSubmit={submit}>
        <Field label="Title" error={act.fieldError('title')}>
          <input required maxLength={200} {...form.text('title')} />
        </Field>
        <Field label="Description" error={act.fieldError('description')}>
          <textarea rows={2} maxLength={10_000} {...form.text('description')} />
        </Field>
        <ErrorBanner error={act.error} />
        <FormActions submit="Save" busy={act.busy} onCancel={props.onClose} />
      </Form>
    </Dialog>
  );
}

const KINDS: ReadonlyArray<{ value: VisualizationKind; label: string }> = [
  { value: 'table', label: 'Table' },
  { value: 'list', label: 'List' },
  { value: 'number', label: 'Number' },
  { value: 'bar', label: 'Bar chart' },
  { value: 'line', label: 'Line chart' },
  { value: 'area', label: 'Area chart' },
  { value: 'pie', label: 'Pie chart' },
  { value: 'map', label: 'Map of countries' },
];

/** What a widget's query computes, in words: "A TopN of host", "A Timeline". */
function queryKind(w: Widget): string {
  const { type, params } = w.query;
  const field = typeof params.field === 'string' ? ` of ${params.field}` : '';
  const by =
    Array.isArray(params.group_by) && params.group_by.length ? ` by ${params.group_by.join(', ')}` : '';
  return `${type === 'Table' ? 'A query with pipes' : `A ${type}`}${field}${by}`;
}

/** The changes a widget's dialog saves (PATCH /api/widgets/:id). */
export interface WidgetChanges {
  title: string;
  query: Widget['query'];
  visualization: Widget['visualization'];
}

/** A widget's title, query text and chart kind; its query type and other parameters stay. */
export function WidgetDialog(props: {
  widget: Widget;
  onSave: (changes: WidgetChanges) => Promise<void>;
  onClose: () => void;
}) {
  const w = props.widget;
  const form = useForm(() => ({
    title: w.title,
    query: typeof w.query.params.query === 'string' ? w.query.params.query : '',
    kind: w.visualization.kind as string,
  }));
  const act = useAction();
  const submit = () =>
    act.run(() =>
      props.onSave({
        title: form.values.title.trim(),
        query: { type: w.query.type, params: { ...w.query.params, query: form.values.query.trim() } },
        visualization: {
          kind: form.values.kind as Widget['visualization']['kind'],
          options: w.visualization.options ?? {},
        },
      }),
    );
  const label = `Edit “${w.title}”`;
  const queryError = act.fieldError('query') ?? act.fieldError('query.params.query');
  return (
    <Dialog label={label} onClose={props.onClose}>
      <Form title={label} className="" onSubmit={submit}>
        <Field label="Title" error={act.fieldError('title')}>
          <input required maxLength={200} {...form.text('title')} />
        </Field>
        <Field
          label="Query"
          hint={`${queryKind(w)}: the query picks its events (empty: all).`}
          error={queryError}
        >
          <input className="dash-query-input" spellCheck={false} {...form.text('query')} />
        </Field>
        <Field label="Chart" error={act.fieldError('visualization')}>
          <Select
            options={KINDS}
            value={form.values.kind}
            onChange={(e) => form.set('kind', e.target.value)}
          />
        </Field>
        <ErrorBanner error={act.error} />
        <FormActions submit="Save" busy={act.busy} onCancel={props.onClose} />
      </Form>
    </Dialog>
  );
}
