import { api, type Paginated } from '../../api';
import { Field, Form, FormActions, Select } from '../../components/Field';
import { Feedback, Page, SmallButton } from '../../components/feedback';
import { type Column, ListTable } from '../../components/ListTable';
import { useForm } from '../../components/useForm';
import { useListPage } from '../../components/useListPage';
import { formatIso } from '../../format';
import { Link, navigate } from '../../router';
import { useApi } from '../../useApi';
import type { Dashboard } from './DashboardView';
import './dashboards.css';

interface Template {
  path: string;
  title: string;
  builtin: boolean;
}

/** `/dashboards`: the caller's dashboards, a new one (empty or from a template), clones. */
export function DashboardsPage() {
  const { list, act } = useListPage<Dashboard>('/api/dashboards?page_size=200');
  const templates = useApi<Paginated<Template>>('/api/dashboards/templates?page_size=200');
  const form = useForm({ title: '', template: '' });

  const createFrom = (body: { title: string } | { template: string }) =>
    act.run(async () => {
      const d = await api<Dashboard>('/api/dashboards', { body });
      navigate(`/dashboards/${d.id}`);
    });

  const chosen = form.values.template || templates.data?.results[0]?.path || '';

  const clone = (d: Dashboard) =>
    act.run(
      async () => {
        const c = await api<Dashboard>(`/api/dashboards?source_id=${d.id}`, { method: 'POST', body: {} });
        list.reload();
        return c;
      },
      { done: (c) => `Created “${c.title}”.` },
    );

  const columns: Column<Dashboard>[] = [
    { header: 'Title', cell: (d) => <Link to={`/dashboards/${d.id}`}>{d.title}</Link> },
    { header: 'Description', wide: true, cell: (d) => d.description },
    { header: 'Widgets', cell: (d) => (Array.isArray(d.widgets) ? d.widgets.length : '') },
    { header: 'Updated', wide: true, cell: (d) => formatIso(d.updated_at) },
  ];

  return (
    <Page title="Dashboards">
      <div className="dash-create">
        <Form
          title="New dashboard"
          className="inline-form"
          headingClassName="dash-form-title"
          onSubmit={() => createFrom({ title: form.values.title })}
        >
          <Field label="Title" id="new-dashboard-title" error={act.fieldError('title')}>
            <input required maxLength={200} {...form.text('title')} />
          </Field>
          <FormActions submit="Create" busy={act.busy} />
        </Form>
        <Form
          title="From template"
          className="inline-form"
          headingClassName="dash-form-title"
          onSubmit={() => chosen && createFrom({ template: chosen })}
        >
          <Field label="Template" id="new-dashboard-template">
            <Select
              value={chosen}
              onChange={(e) => form.set('template', e.target.value)}
              options={(templates.data?.results ?? []).map((t) => ({
                value: t.path,
                label: `${t.title} (${t.builtin ? 'built-in' : t.path})`,
              }))}
            />
          </Field>
          <FormActions
            submit="Create from template"
            busy={act.busy}
            disabled={!templates.data?.results.length}
          />
        </Form>
      </div>
      <Feedback action={act} error={list.error ?? templates.error} />
      <ListTable
        list={list}
        columns={columns}
        noun={['dashboard', 'dashboards']}
        shown="first"
        empty="No dashboards yet."
        actions={(d) => (
          <SmallButton aria-label={`Clone ${d.title}`} disabled={act.busy} onClick={() => clone(d)}>
            Clone
          </SmallButton>
        )}
      />
    </Page>
  );
}
