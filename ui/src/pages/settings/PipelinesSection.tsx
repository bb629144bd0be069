import { useState } from 'react';
import { type Answer, api, type LogEvent, runQuery, type Schemas, type SearchResults } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner, Feedback, SmallButton } from '../../components/feedback';
import { type Column, ListTable } from '../../components/ListTable';
import { useAction } from '../../components/useAction';
import { useListPage } from '../../components/useListPage';
import { Section } from './Section';

type Pipeline = Schemas['Pipeline'];

type Simulated = Answer<'/api/pipelines/simulate', 'post'>['events'][number];

/** A step of each kind, as the editor inserts it (docs/intake/pipelines.md). */
const STEP_TEMPLATES: Record<string, object> = {
  grok: { grok: { field: 'message', patterns: ['%{IP:src_ip} %{WORD:action}'] } },
  regex: { regex: { field: 'message', pattern: 'user=(?P<user>\\S+)' } },
  kv: { kv: { field: 'message' } },
  json: { json: { field: 'message' } },
  rename: { rename: { from: 'usr', to: 'user' } },
  set: { set: { field: 'env', value: 'prod' } },
  remove: { remove: { field: 'password' } },
  timestamp: { timestamp: { field: 'time', formats: ['ISO8601'] } },
  drop: { drop: {}, if: 'severity:debug' },
};
const STEP_KINDS = Object.keys(STEP_TEMPLATES);

/** Admins and manage_pipelines holders: the pipelines intake runs, in order; enable, edit, try. */
export function PipelinesSection() {
  const { list, act, remove } = useListPage<Pipeline>('/api/pipelines?page_size=1000');
  const [editing, setEditing] = useState<Pipeline | 'new' | null>(null);

  const toggle = (p: Pipeline) =>
    act.run(
      async () => {
        await api(`/api/pipelines/${p.id}`, { method: 'PATCH', body: { enabled: !p.enabled } });
        list.reload();
      },
      { done: `${p.enabled ? 'Disabled' : 'Enabled'} “${p.name}”.` },
    );

  const columns: Column<Pipeline>[] = [
    { header: 'Order', cell: (p) => p.order },
    { header: 'Pipeline', cell: (p) => (p.builtin ? `${p.name} (built in)` : p.name) },
    {
      header: 'Applies to',
      cell: (p) => (p.when ? <code>{p.when}</code> : <span className="muted">every event</span>),
    },
    { header: 'Steps', wide: true, cell: (p) => p.steps.length },
    { header: 'Enabled', cell: (p) => (p.enabled ? 'Yes' : 'No') },
  ];

  return (
    <Section title="Pipelines">
      <p className="muted">
        Pipelines pull fields out of events as they arrive, in order. A change applies to what arrives from
        then on.
      </p>
      <button type="button" onClick={() => setEditing('new')}>
        New pipeline
      </button>
      <Feedback action={act} error={list.error} />
      <ListTable
        list={list}
        columns={columns}
        noun={['pipeline', 'pipelines']}
        actions={(p) => (
          <>
            <SmallButton
              aria-label={`${p.enabled ? 'Disable' : 'Enable'} ${p.name}`}
              onClick={() => toggle(p)}
            >
              {p.enabled ? 'Disable' : 'Enable'}
            </SmallButton>
            <SmallButton
              aria-label={`${p.builtin ? 'View' : 'Edit'} ${p.name}`}
              onClick={() => setEditing(p)}
            >
              {p.builtin ? 'View' : 'Edit'}
            </SmallButton>
            {!p.builtin && (
              <SmallButton
                aria-label={`Delete ${p.name}`}
                onClick={() =>
                  remove(`Delete the pipeline “${p.name}”?`, `/api/pipelines/${p.id}`, `Deleted “${p.name}”.`)
                }
              >
                Delete
              </SmallButton>
            )}
          </>
        )}
      />
      {editing && (
        <PipelineDialog
          pipeline={editing === 'new' ? null : editing}
          onClose={() => setEditing(null)}
          onSaved={(p) => {
            act.setNotice(`Saved pipeline “${p.name}”.`);
            setEditing(null);
            list.reload();
          }}
        />
      )}
    </Section>
  );
}

/** Pasted records: one JSON object a line, or a plain line as its message. */
function recordsOf(text: string): unknown[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      if (l.startsWith('{')) {
        try {
          return JSON.parse(l) as unknown;
        } catch {
          return { message: l };
        }
      }
      return { message: l };
    });
}

function PipelineDialog(props: {
  pipeline: Pipeline | null;
  onClose: () => void;
  onSaved: (p: Pipeline) => void;
}) {
  const { pipeline } = props;
  const readOnly = pipeline?.builtin ?? false;
  const [name, setName] = useState(pipeline?.name ?? '');
  const [when, setWhen] = useState(pipeline?.when ?? '');
  const [order, setOrder] = useState(String(pipeline?.order ?? 200));
  const [steps, setSteps] = useState(JSON.stringify(pipeline?.steps ?? [], null, 2));
  const [kind, setKind] = useState(STEP_KINDS[0] as string);
  const [sample, setSample] = useState('');
  const [results, setResults] = useState<Simulated[] | null>(null);
  const act = useAction();
  const tryIt = useAction();
  const title = pipeline ? `${readOnly ? 'Pipeline' : 'Edit pipeline'} “${pipeline.name}”` : 'New pipeline';

  const parsedSteps = (): unknown[] => {
    try {
      const v = JSON.parse(steps) as unknown;
      if (Array.isArray(v)) return v;
    } catch {
      // reported below
    }
    throw new Error('Steps must be a JSON list of steps, e.g. [{"kv": {"field": "message"}}].');
  };
  const addStep = () => {
    try {
      setSteps(JSON.stringify([...parsedSteps(), STEP_TEMPLATES[kind]], null, 2));
    } catch (err) {
      tryIt.run(async () => {
        throw err;
      });
    }
  };
  const save = () =>
    act.run(async () => {
      const body = readOnly
        ? { order: Number(order) }
        : { name: name.trim(), when, order: Number(order), steps: parsedSteps() };
      props.onSaved(
        await api<Pipeline>(pipeline ? `/api/pipelines/${pipeline.id}` : '/api/pipelines', {
          method: pipeline ? 'PATCH' : 'POST',
          body,
        }),
      );
    });
  const recent = () =>
    tryIt.run(async () => {
      const ctl = new AbortController();
      const q = await runQuery<SearchResults>(
        { type: 'Search', params: { query: when, time_range: { preset: 'last_24_hours' }, page_size: 5 } },
        { signal: ctl.signal, onUpdate: () => {} },
      );
      const events = (q.results.events ?? []) as LogEvent[];
      setSample(
        events
          .map((e) =>
            JSON.stringify(
              Object.fromEntries(['host', 'app', 'message'].filter((k) => e[k]).map((k) => [k, e[k]])),
            ),
          )
          .join('\n'),
      );
    });
  const simulate = () =>
    tryIt.run(async () => {
      const events = recordsOf(sample);
      if (!events.length) throw new Error('Paste a record or a log line first (or take recent events).');
      const body = readOnly
        ? { pipeline_id: pipeline?.id, events }
        : { pipeline: { name: name.trim() || 'draft', when, steps: parsedSteps() }, events };
      const res = await api<{ events: Simulated[] }>('/api/pipelines/simulate', { body });
      setResults(res.events);
    });

  return (
    <Dialog label={title} onClose={props.onClose}>
      <Form title={title} className="" onSubmit={save}>
        <Field label="Name" error={act.fieldError('name')}>
          <input
            required
            readOnly={readOnly}
            maxLength={200}
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        </Field>
        <Field label="Applies to (query)" hint="Empty: every event." error={act.fieldError('when')}>
          <input
            readOnly={readOnly}
            spellCheck={false}
            value={when}
            onChange={(e) => setWhen(e.target.value)}
          />
        </Field>
        <Field
          label="Order"
          hint="Lower runs first; the built-ins run from 10 to 160."
          error={act.fieldError('order')}
        >
          <input type="number" value={order} onChange={(e) => setOrder(e.target.value)} />
        </Field>
        <Field
          label="Steps (JSON)"
          hint={readOnly ? 'A built-in’s steps come with the version you run.' : undefined}
          error={act.fieldError('steps')}
        >
          <textarea
            rows={8}
            readOnly={readOnly}
            spellCheck={false}
            className="code-input"
            value={steps}
            onChange={(e) => setSteps(e.target.value)}
          />
        </Field>
        {!readOnly && (
          <div className="inline-form">
            <Field label="Step kind">
              <Select options={STEP_KINDS} value={kind} onChange={(e) => setKind(e.target.value)} />
            </Field>
            <button type="button" className="secondary" onClick={addStep}>
              Add step
            </button>
          </div>
        )}
        <Field label="Try it on" hint="One JSON record a line, or plain log lines (each becomes a message).">
          <textarea
            rows={4}
            spellCheck={false}
            className="code-input"
            value={sample}
            onChange={(e) => setSample(e.target.value)}
          />
        </Field>
        <div className="form-actions">
          <button type="button" className="secondary" onClick={recent}>
            Take recent events
          </button>
          <button type="button" className="secondary" onClick={simulate}>
            Simulate
          </button>
        </div>
        <ErrorBanner error={tryIt.error} />
        {results && <SimulationResults results={results} />}
        <ErrorBanner error={act.error} />
        <FormActions submit="Save" busy={act.busy} onCancel={props.onClose} />
      </Form>
    </Dialog>
  );
}

function SimulationResults({ results }: { results: readonly Simulated[] }) {
  return (
    <section aria-label="Simulation" className="simulation">
      <h3>As it would be stored</h3>
      <ol>
        {results.map((r, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: the results are the sample's lines, in order
          <li key={i}>
            {r.error ? (
              <span className="field-error">Refused: {r.error}</span>
            ) : r.dropped ? (
              <span className="muted">Dropped</span>
            ) : (
              // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable block must take the keyboard (axe scrollable-region-focusable)
              <section className="code-block" aria-label={`Event ${i + 1} as stored`} tabIndex={0}>
                <pre>{JSON.stringify(r.event, null, 2)}</pre>
              </section>
            )}
            {r.applied.length > 0 && <p className="muted small-text">Applied: {r.applied.join(', ')}</p>}
            {r.failures.map((f) => (
              <p key={f.pipeline} className="field-error">
                {f.pipeline} undone: {f.error}
              </p>
            ))}
          </li>
        ))}
      </ol>
    </section>
  );
}
