import { useMemo, useState } from 'react';
import { api, type Schemas } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Check, Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner, Notice } from '../../components/feedback';
import { useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { Link } from '../../router';
import { useApi } from '../../useApi';
import { streamOf, useReadableStreams, withStream } from '../search/StreamPicker';
import type { Channel } from './AlertingPage';
import { TriggerPreview, useHistory } from './TriggerPreview';
import { type Op, type PreviewCondition, searchPart } from './trigger-preview';
import './create-trigger.css';

type Trigger = Schemas['Trigger'];

const OPS: { value: Op; label: string }[] = [
  { value: 'gt', label: 'More than' },
  { value: 'gte', label: 'At least' },
  { value: 'lt', label: 'Fewer than' },
  { value: 'lte', label: 'At most' },
];
const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;

/** What the form starts with: the search's query, more than 10 matches in 5 minutes. */
export const DEFAULT_CONDITION = { op: 'gt' as Op, value: '10', minutes: '5', cooldownMinutes: '5' };

/** A number typed in the form, or null (sent as such: the API says what is wrong with it). */
const numberOf = (text: string): number | null => {
  const n = Number(text);
  return text.trim() === '' || !Number.isFinite(n) ? null : n;
};

/** The form's condition when it is one the API takes (the preview judges only those). */
function conditionOf(v: { op: Op; value: string; minutes: string; cooldownMinutes: string }) {
  const value = numberOf(v.value);
  const minutes = numberOf(v.minutes);
  const cooldown = numberOf(v.cooldownMinutes);
  if (value === null || minutes === null || cooldown === null) return null;
  const c: PreviewCondition = {
    op: v.op,
    value,
    window_seconds: Math.round(minutes * 60),
    cooldown_seconds: Math.round(cooldown * 60),
  };
  const ok =
    Number.isInteger(value) &&
    value >= (v.op === 'lt' ? 1 : 0) &&
    c.window_seconds >= 1 &&
    c.window_seconds <= 86_400 &&
    c.cooldown_seconds >= 0;
  return ok ? c : null;
}

/**
 * "Create trigger…" from the search page: a threshold trigger on the search's query (its
 * `stream:` terms included, its pipes left out), with a preview of how often it would have
 * fired over the last 24 h as the threshold and window change. Saved with POST
 * /api/triggers; the API's 400 messages are shown at their fields.
 */
export function CreateTriggerDialog(props: { query: string; onClose: () => void }) {
  const initialQuery = searchPart(props.query);
  const form = useForm(() => ({
    name: (withStream(initialQuery, null) || 'All events').slice(0, 200),
    query: initialQuery,
    severity: 'medium',
    ...DEFAULT_CONDITION,
    task: true,
  }));
  const v = form.values;
  const act = useAction();
  const [made, setMade] = useState<Trigger | null>(null);
  const channels = useApi<{ results: Channel[] }>('/api/channels?page_size=200');
  const [notify, setNotify] = useState<number[]>([]);
  const streams = useReadableStreams();
  const past = useHistory(v.query);
  const condition = useMemo(
    () =>
      conditionOf({ op: v.op as Op, value: v.value, minutes: v.minutes, cooldownMinutes: v.cooldownMinutes }),
    [v.op, v.value, v.minutes, v.cooldownMinutes],
  );

  const streamId = streamOf(v.query);
  const streamTitle = streamId === null ? null : streams?.find((s) => s.id === streamId)?.title;
  const piped = initialQuery !== props.query.trim();

  const fieldError = act.fieldError;
  const shown = ['name', 'query', 'severity', 'condition.op', 'condition.value', 'condition.window_seconds'];
  const marked = [...shown, 'cooldown_seconds', 'notify'].some((f) => fieldError(f));

  const submit = () =>
    act.run(async () => {
      const minutes = numberOf(v.minutes);
      const cooldown = numberOf(v.cooldownMinutes);
      const t = await api<Trigger>('/api/triggers', {
        body: {
          name: v.name.trim(),
          query: v.query,
          severity: v.severity,
          create_task: v.task,
          condition: {
            type: 'threshold',
            op: v.op,
            value: numberOf(v.value),
            window_seconds: minutes === null ? null : Math.round(minutes * 60),
            group_by: [],
          },
          cooldown_seconds: cooldown === null ? null : Math.round(cooldown * 60),
          notify,
        },
      });
      setMade(t);
    });

  const channelList = channels.data?.results ?? [];
  return (
    <Dialog label="Create trigger" onClose={props.onClose}>
      <Form className="trigger-dialog" onSubmit={submit}>
        <h2>Create trigger</h2>
        <p className="muted">
          Fires when the matches of this search in a sliding window cross the threshold, from now on.
        </p>
        <Field label="Name" error={fieldError('name')}>
          <input required maxLength={200} disabled={!!made} {...form.text('name')} />
        </Field>
        <Field
          label="Query"
          live
          error={fieldError('query') ?? (past.invalid ? past.error : null)}
          hint={
            [
              streamId !== null ? `In the stream ${streamTitle ? `“${streamTitle}”` : streamId}.` : '',
              piped ? 'The search’s pipes are left out: a trigger counts matching events.' : '',
            ]
              .filter(Boolean)
              .join(' ') || undefined
          }
        >
          <input
            className="mono"
            spellCheck={false}
            autoComplete="off"
            disabled={!!made}
            {...form.text('query')}
          />
        </Field>
        <div className="trigger-condition">
          <Field label="Fires when" error={fieldError('condition.op')}>
            <Select options={OPS} disabled={!!made} {...form.text('op')} />
          </Field>
          <Field label="N (matches)" error={fieldError('condition.value')}>
            <input type="number" step="any" inputMode="numeric" disabled={!!made} {...form.text('value')} />
          </Field>
          <Field label="Window (minutes)" error={fieldError('condition.window_seconds')}>
            <input type="number" step="any" disabled={!!made} {...form.text('minutes')} />
          </Field>
        </div>
        <TriggerPreview {...past} condition={condition} />
        <div className="trigger-condition">
          <Field label="Severity" error={fieldError('severity')}>
            <Select options={SEVERITIES} disabled={!!made} {...form.text('severity')} />
          </Field>
          <Field
            label="Cooldown (minutes)"
            hint="Least time between two notifications."
            error={fieldError('cooldown_seconds')}
          >
            <input type="number" step="any" disabled={!!made} {...form.text('cooldownMinutes')} />
          </Field>
          <Check label="Open a task when it fires" disabled={!!made} {...form.check('task')} />
        </div>
        {channelList.length > 0 && (
          <fieldset className="notify-field">
            <legend>Notify</legend>
            {channelList.map((c) => (
              <Check
                key={c.id}
                label={c.name}
                disabled={!!made}
                checked={notify.includes(c.id)}
                onChange={(e) =>
                  setNotify((n) => (e.target.checked ? [...n, c.id] : n.filter((x) => x !== c.id)))
                }
              />
            ))}
            {fieldError('notify') && <span className="field-error">{fieldError('notify')}</span>}
          </fieldset>
        )}
        <ErrorBanner error={marked ? 'The trigger was not created: see the marked fields.' : act.error} />
        {made && (
          <Notice>
            Created the trigger “{made.name}”.{' '}
            <Link to={`/triggers?edit=${made.id}`}>Open it in Triggers</Link>
          </Notice>
        )}
        <FormActions
          submit={made ? undefined : 'Create trigger'}
          busy={act.busy}
          disabled={!v.name.trim()}
          onCancel={props.onClose}
          cancel={made ? 'Close' : 'Cancel'}
        />
      </Form>
    </Dialog>
  );
}
