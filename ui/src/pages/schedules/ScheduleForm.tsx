import { TIME_PRESETS } from '@shared/time-presets';
import { useState } from 'react';
import { api, type Paginated } from '../../api';
import { Check, Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner } from '../../components/feedback';
import { useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { Link } from '../../router';
import { useApi } from '../../useApi';
import { useMe } from '../../useMe';
import type { DashboardItem } from '../reports/ReportsPage';
import { type Channel, carriesReports, TYPE_NAMES } from '../triggers/channel-kinds';
import { CronField } from './CronField';
import { type Schedule, timeZones, useCronPreview, viewerZone } from './schedule-times';

/** The formats a schedule renders (docs/api/schedules.md). */
const FORMATS = [
  { value: 'pdf', label: 'PDF' },
  { value: 'xlsx', label: 'Excel (xlsx)' },
  { value: 'docx', label: 'Word (docx)' },
  { value: 'csv', label: 'CSV' },
];

interface SavedSearchItem {
  id: number;
  title: string;
}

/** The dashboards and saved searches a schedule may render, and a source's name. */
export function useSources() {
  const boards = useApi<Paginated<DashboardItem>>('/api/dashboards?page_size=200&ordering=title');
  const searches = useApi<Paginated<SavedSearchItem>>('/api/saved-searches?page_size=200&ordering=title');
  const dashboards = boards.data?.results ?? [];
  const saved = searches.data?.results ?? [];
  const name = (source: Schedule['source']) =>
    'dashboard_id' in source
      ? (dashboards.find((d) => d.id === source.dashboard_id)?.title ?? `Dashboard #${source.dashboard_id}`)
      : (saved.find((s) => s.id === source.saved_search_id)?.title ??
        `Saved search #${source.saved_search_id}`);
  return { dashboards, saved, name, loaded: boards.data !== null && searches.data !== null };
}

/** A source as the picker's value: `d:<id>` or `s:<id>`. */
const sourceKey = (s: Schedule['source'] | undefined) =>
  !s ? '' : 'dashboard_id' in s ? `d:${s.dashboard_id}` : `s:${s.saved_search_id}`;
const sourceBody = (key: string) =>
  key.startsWith('d:') ? { dashboard_id: Number(key.slice(2)) } : { saved_search_id: Number(key.slice(2)) };

const formValues = (s: Schedule | undefined) => ({
  name: s?.name ?? '',
  description: s?.description ?? '',
  source: sourceKey(s?.source),
  format: s?.format ?? 'pdf',
  range: s?.time_range?.preset ?? '',
  cron: s?.cron ?? '0 8 * * 1',
  zone: s?.time_zone ?? viewerZone(),
  enabled: s?.enabled ?? true,
  keep: String(s?.keep_reports ?? 10),
});

const ZONES = timeZones();

/** A new schedule, or (`editing`) changes to one: every field of docs/api/schedules.md. */
export function ScheduleForm({
  editing,
  onSaved,
  onCancel,
}: {
  editing?: Schedule;
  onSaved: (s: Schedule) => void;
  onCancel: () => void;
}) {
  const form = useForm(() => formValues(editing));
  const { name, description, source, format, range, cron, zone, enabled, keep } = form.values;
  const [deliverTo, setDeliverTo] = useState<number[]>(editing?.deliver_to ?? []);
  const [find, setFind] = useState('');
  const sources = useSources();
  const me = useMe();
  const channels = useApi<Paginated<Channel>>('/api/channels?page_size=200');
  const preview = useCronPreview(cron, zone);
  const act = useAction();

  const reportChannels = (channels.data?.results ?? []).filter(
    (c) => deliverTo.includes(c.id) || (carriesReports(c.type) && (!me || c.owner === me.id)),
  );
  const matches = (title: string) => title.toLowerCase().includes(find.trim().toLowerCase());
  const sourceGroups = [
    { label: 'Dashboards', options: sources.dashboards.map((d) => ({ value: `d:${d.id}`, label: d.title })) },
    { label: 'Saved searches', options: sources.saved.map((s) => ({ value: `s:${s.id}`, label: s.title })) },
  ].map((g) => ({ ...g, options: g.options.filter((o) => o.value === source || matches(o.label)) }));
  const ranges = [
    { value: '', label: 'The source’s own' },
    ...TIME_PRESETS.map((p) => ({ value: p.value, label: p.label })),
    ...(range && !TIME_PRESETS.some((p) => p.value === range) ? [{ value: range, label: range }] : []),
  ];

  const submit = () =>
    act.run(async () => {
      const s = await api<Schedule>(editing ? `/api/schedules/${editing.id}` : '/api/schedules', {
        ...(editing ? { method: 'PATCH' } : {}),
        body: {
          name: name.trim(),
          description,
          source: sourceBody(source),
          format,
          time_range: range ? { preset: range } : null,
          cron: cron.trim(),
          time_zone: zone.trim(),
          deliver_to: deliverTo,
          enabled,
          keep_reports: Number(keep),
        },
      });
      onSaved(s);
    });

  const sourceError =
    act.fieldError('source') ??
    act.fieldError('source.dashboard_id') ??
    act.fieldError('source.saved_search_id');
  return (
    <Form
      title={editing ? `Edit schedule “${editing.name}”` : 'New schedule'}
      className="work-form schedule-form"
      onSubmit={submit}
    >
      <Field label="Name" id="schedule-name" className="grow" error={act.fieldError('name')}>
        <input required maxLength={200} {...form.text('name')} />
      </Field>
      <Field
        label="Description"
        id="schedule-description"
        className="grow"
        error={act.fieldError('description')}
      >
        <input maxLength={10_000} placeholder="Optional" {...form.text('description')} />
      </Field>
      <div className="source-pick">
        {sources.dashboards.length + sources.saved.length > 8 && (
          <Field label="Find a source" id="schedule-source-find">
            <input type="search" autoComplete="off" value={find} onChange={(e) => setFind(e.target.value)} />
          </Field>
        )}
        <Field
          label="Source"
          id="schedule-source"
          error={sourceError}
          hint={
            sources.loaded && sources.dashboards.length + sources.saved.length === 0 ? (
              <>
                Make a <Link to="/dashboards">dashboard</Link> or save a search first.
              </>
            ) : undefined
          }
        >
          <select required {...form.text('source')}>
            <option value="">Choose a dashboard or a saved search</option>
            {sourceGroups.map(
              (g) =>
                g.options.length > 0 && (
                  <optgroup key={g.label} label={g.label}>
                    {g.options.map((o) => (
                      <option key={o.value} value={o.value}>
                        {o.label}
                      </option>
                    ))}
                  </optgroup>
                ),
            )}
          </select>
        </Field>
      </div>
      <Field label="Format" id="schedule-format" error={act.fieldError('format')}>
        <Select options={FORMATS} {...form.text('format')} />
      </Field>
      <Field label="Time range" id="schedule-range" error={act.fieldError('time_range')}>
        <Select options={ranges} {...form.text('range')} />
      </Field>
      <CronField
        value={cron}
        onChange={(c) => form.set('cron', c)}
        zone={zone}
        state={preview}
        saveError={act.fieldError('cron')}
        zoneField={
          <>
            <Field
              label="Time zone"
              id="schedule-zone"
              live
              error={preview.error?.field === 'time_zone' ? preview.error.text : act.fieldError('time_zone')}
            >
              <input
                required
                list="schedule-zones"
                autoComplete="off"
                spellCheck={false}
                {...form.text('zone')}
              />
            </Field>
            <datalist id="schedule-zones">
              {ZONES.map((z) => (
                <option key={z} value={z} />
              ))}
            </datalist>
          </>
        }
      />
      <Field
        label="Keep reports"
        id="schedule-keep"
        hint="The newest kept; older ones are deleted."
        error={act.fieldError('keep_reports')}
      >
        <input type="number" min={1} max={1000} required {...form.text('keep')} />
      </Field>
      <fieldset className="notify-field deliver-field">
        <legend>Deliver to</legend>
        {reportChannels.length === 0 ? (
          <span className="muted small-text">
            No email, webhook, Slack or Teams channels (<Link to="/alerting">make one</Link>); the report is
            only stored.
          </span>
        ) : (
          reportChannels.map((c) => (
            <Check
              key={c.id}
              label={`${c.name} (${TYPE_NAMES[c.type].short})`}
              checked={deliverTo.includes(c.id)}
              onChange={(e) =>
                setDeliverTo((d) => (e.target.checked ? [...d, c.id] : d.filter((x) => x !== c.id)))
              }
            />
          ))
        )}
        {act.fieldError('deliver_to') && <span className="field-error">{act.fieldError('deliver_to')}</span>}
      </fieldset>
      <Check label="Enabled" {...form.check('enabled')} />
      <ErrorBanner
        error={preview.error?.field === 'other' ? preview.error.text : null}
        className="form-error"
      />
      <FormActions
        submit={editing ? 'Save changes' : 'Create schedule'}
        busy={act.busy}
        disabled={!name.trim() || !source || !zone.trim() || preview.error !== null || preview.checking}
        onCancel={onCancel}
      />
      <ErrorBanner error={act.error} className="form-error" />
    </Form>
  );
}
