import { useState } from 'react';
import type { Schemas } from '../../api';
import { Field, Form, FormActions, Select } from '../../components/Field';
import { Feedback } from '../../components/feedback';
import { type Column, ListTable } from '../../components/ListTable';
import { useListPage } from '../../components/useListPage';
import { formatIso } from '../../format';
import { downloadFile } from '../reports/download';
import { Section } from './Section';

type AuditRecord = Schemas['AuditRecord'];

const FAMILIES = [
  '',
  'auth.',
  'token.',
  'user.',
  'team.',
  'stream.',
  'pipeline.',
  'trigger.',
  'channel.',
  'query.',
  'export.',
  'report.',
  'event.',
];

/** A line saying what a record's detail holds, briefly. */
const detailText = (d: Record<string, unknown>) =>
  Object.entries(d)
    .filter(([, v]) => v !== null && v !== '' && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' · ');

/** Admins: the audit trail (GET /api/audit), newest first, filtered; exported as ndjson or csv. */
export function AuditSection() {
  const [filters, setFilters] = useState({ actor: '', action: '', from: '' });
  const [applied, setApplied] = useState(filters);
  const qs = new URLSearchParams({ page_size: '100' });
  if (applied.actor.trim()) qs.set('actor', applied.actor.trim());
  if (applied.action) qs.set('action', applied.action);
  if (applied.from) qs.set('from', new Date(applied.from).toISOString());
  const { list, act } = useListPage<AuditRecord>(`/api/audit?${qs}`);
  const exportAs = (ftype: 'ndjson' | 'csv') => {
    const q = new URLSearchParams(qs);
    q.delete('page_size');
    q.set('ftype', ftype);
    return act.run(() => downloadFile(`/api/audit/export?${q}`, `audit.${ftype}`), {
      done: (name) => `Downloaded ${name}.`,
    });
  };

  const columns: Column<AuditRecord>[] = [
    { header: 'When', cell: (r) => formatIso(r.at) },
    { header: 'Who', cell: (r) => r.actor.username ?? <span className="muted">nobody</span> },
    { header: 'From', wide: true, cell: (r) => r.actor.address ?? '' },
    { header: 'Action', cell: (r) => <code>{r.action}</code> },
    { header: 'On', wide: true, cell: (r) => (r.target ? `${r.target.kind} ${r.target.id ?? ''}` : '') },
    { header: 'Outcome', cell: (r) => r.outcome },
    { header: 'Detail', wide: true, className: 'audit-detail', cell: (r) => detailText(r.detail) },
  ];

  return (
    <Section title="Audit trail">
      <p className="muted">
        Who signed in, changed, searched, exported or read what, newest first. Nobody can change it.
      </p>
      <Form className="inline-form" onSubmit={() => setApplied(filters)}>
        <Field label="Who (name or id)">
          <input value={filters.actor} onChange={(e) => setFilters({ ...filters, actor: e.target.value })} />
        </Field>
        <Field label="Actions">
          <Select
            options={FAMILIES.map((f) => ({ value: f, label: f ? `${f.slice(0, -1)}.*` : 'all' }))}
            value={filters.action}
            onChange={(e) => setFilters({ ...filters, action: e.target.value })}
          />
        </Field>
        <Field label="Since">
          <input
            type="datetime-local"
            value={filters.from}
            onChange={(e) => setFilters({ ...filters, from: e.target.value })}
          />
        </Field>
        <FormActions submit="Show" />
      </Form>
      <div className="form-actions">
        <button type="button" className="secondary" onClick={() => exportAs('csv')}>
          Export CSV
        </button>
        <button type="button" className="secondary" onClick={() => exportAs('ndjson')}>
          Export NDJSON
        </button>
      </div>
      <Feedback action={act} error={list.error} />
      <ListTable list={list} columns={columns} noun={['record', 'records']} shown="newest" />
    </Section>
  );
}
