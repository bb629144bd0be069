import { useEffect, useState } from 'react';
import { ApiError, api, errorText, isAbort } from '../../api';
import { Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner } from '../../components/feedback';
import { useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { Link } from '../../router';
import { useApi } from '../../useApi';
import { useMe } from '../../useMe';
import type { Channel } from './AlertingPage';
import { PatternRateFields } from './PatternRateFields';
import type { Trigger } from './TriggersPage';
import { type Op, patternRateBody, patternRateValues } from './trigger-condition';

type When = 'match' | 'new_pattern' | 'pattern_rate' | Op;

const WHEN: { value: When; label: string }[] = [
  { value: 'match', label: 'Every match' },
  { value: 'new_pattern', label: 'A new kind of message (pattern)' },
  { value: 'pattern_rate', label: 'A kind of message surges or disappears (pattern rate)' },
  { value: 'gt', label: 'More than N in a window' },
  { value: 'gte', label: 'At least N in a window' },
  { value: 'lt', label: 'Fewer than N in a window (silence)' },
  { value: 'lte', label: 'At most N in a window' },
];

const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;

/**
 * The query's problem as the server states it (`POST /api/query?validate_only=true`), or
 * null when it is valid. Throws on anything but a 400 (an abort, a network failure).
 */
export async function validateQuery(query: string, signal?: AbortSignal): Promise<string | null> {
  try {
    await api('/api/query?validate_only=true', {
      body: { type: 'Search', params: { query } },
      signal,
    });
    return null;
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) {
      const own = err.errors?.['params.query'];
      return own?.length ? own.join(' ') : errorText(err);
    }
    throw err;
  }
}

type TriggerAction = 'record' | 'task' | 'task-me';
const TRIGGER_ACTIONS: { value: TriggerAction; label: string }[] = [
  { value: 'record', label: 'Record matches' },
  { value: 'task', label: 'Open a task' },
  { value: 'task-me', label: 'Open a task assigned to me' },
];

/** The form's values for a trigger (a new one: the defaults). */
function formValues(t: Trigger | undefined, myId: number | undefined) {
  const c = t?.condition;
  return {
    name: t?.name ?? '',
    query: t?.query ?? '',
    severity: t?.severity ?? 'medium',
    action: (!t?.create_task
      ? 'record'
      : t.assign_to !== null && t.assign_to === myId
        ? 'task-me'
        : 'task') as TriggerAction,
    when: (c?.type === 'threshold' ? c.op : (c?.type ?? 'match')) as When,
    warmupHours: c?.type === 'new_pattern' ? String(c.warmup_seconds / 3600) : '1',
    value: c?.type === 'threshold' ? String(c.value) : '100',
    minutes: c?.type === 'threshold' ? String(c.window_seconds / 60) : '5',
    groupBy: c?.type === 'threshold' ? c.group_by.join(', ') : '',
    ...patternRateValues(c),
  };
}

/** A new trigger, or (`editing`) changes to one: its condition and channels included. */
export function TriggerForm({
  editing,
  onSaved,
  onCancel,
}: {
  editing?: Trigger;
  onSaved: (t: Trigger) => void;
  onCancel?: () => void;
}) {
  const me = useMe();
  const initial = formValues(editing, me?.id);
  const form = useForm(initial);
  const { name, query, severity, action, when, value, minutes, groupBy, warmupHours } = form.values;
  const channels = useApi<{ results: Channel[] }>('/api/channels?page_size=200');
  const [notify, setNotify] = useState<number[]>(editing?.notify ?? []);
  const [queryError, setQueryError] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);
  const act = useAction();

  // The query is checked 400 ms after the last keystroke.
  useEffect(() => {
    if (!query.trim()) {
      setQueryError(null);
      setChecking(false);
      return;
    }
    const ctl = new AbortController();
    setChecking(true);
    const timer = setTimeout(() => {
      validateQuery(query, ctl.signal)
        .then((problem) => {
          setQueryError(problem);
          setChecking(false);
        })
        .catch((err) => {
          if (!isAbort(err)) setChecking(false);
        });
    }, 400);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [query]);

  // The assignee changes only with the action (a task assigned by the API to someone else stays so).
  const assignTo =
    editing && action === initial.action
      ? {}
      : action === 'task-me' && me
        ? { assign_to: me.id }
        : editing
          ? { assign_to: null }
          : {};
  const submit = () =>
    act.run(async () => {
      const t = await api<Trigger>(editing ? `/api/triggers/${editing.id}` : '/api/triggers', {
        ...(editing ? { method: 'PATCH' } : {}),
        body: {
          name: name.trim(),
          query,
          severity,
          create_task: action !== 'record',
          ...assignTo,
          condition:
            when === 'match'
              ? { type: 'match' }
              : when === 'new_pattern'
                ? { type: 'new_pattern', warmup_seconds: Math.round(Number(warmupHours) * 3600) }
                : when === 'pattern_rate'
                  ? patternRateBody(form.values)
                  : {
                      type: 'threshold',
                      op: when,
                      value: Number(value),
                      window_seconds: Math.round(Number(minutes) * 60),
                      group_by: groupBy
                        .split(',')
                        .map((f) => f.trim())
                        .filter(Boolean),
                    },
          notify,
        },
      });
      if (!editing) {
        form.reset();
        setNotify([]);
      }
      onSaved(t);
    });

  return (
    <Form title={editing ? `Edit trigger “${editing.name}”` : 'New trigger'} onSubmit={submit}>
      <Field label="Name" id="trigger-name" error={act.fieldError('name')}>
        <input required maxLength={200} {...form.text('name')} />
      </Field>
      <Field
        label="Query"
        id="trigger-query"
        className="grow"
        live
        error={queryError ?? act.fieldError('query')}
      >
        <input
          className="mono"
          spellCheck={false}
          autoComplete="off"
          placeholder="action:login_failure user:root"
          {...form.text('query')}
        />
      </Field>
      <Field label="Severity" id="trigger-severity" error={act.fieldError('severity')}>
        <Select options={SEVERITIES} {...form.text('severity')} />
      </Field>
      <Field label="Action" id="trigger-action">
        <Select options={TRIGGER_ACTIONS} {...form.text('action')} />
      </Field>
      <Field label="Fires on" id="trigger-when" error={act.fieldError('condition')}>
        <Select options={WHEN} {...form.text('when')} />
      </Field>
      {when === 'new_pattern' && (
        <Field
          label="Warm-up (hours)"
          id="trigger-warmup"
          hint="Patterns first seen this soon after the trigger is made are not new to it."
          error={act.fieldError('condition.warmup_seconds')}
        >
          <input type="number" min={0} max={720} step="any" required {...form.text('warmupHours')} />
        </Field>
      )}
      {when === 'pattern_rate' && <PatternRateFields text={form.text} fieldError={act.fieldError} />}
      {when !== 'match' && when !== 'new_pattern' && when !== 'pattern_rate' && (
        <>
          <Field label="N (events)" id="trigger-value" error={act.fieldError('condition.value')}>
            <input type="number" min={0} required {...form.text('value')} />
          </Field>
          <Field
            label="Window (minutes)"
            id="trigger-window"
            error={act.fieldError('condition.window_seconds')}
          >
            <input type="number" min={0.1} max={1440} step="any" required {...form.text('minutes')} />
          </Field>
          <Field
            label="Per (fields)"
            id="trigger-group"
            hint="Optional, comma-separated: each value counted on its own."
            error={act.fieldError('condition.group_by[0]')}
          >
            <input className="mono" placeholder="host" {...form.text('groupBy')} />
          </Field>
        </>
      )}
      <fieldset className="notify-field">
        <legend>Notify</legend>
        {(channels.data?.results ?? []).length === 0 ? (
          <span className="muted small-text">
            No channels yet (<Link to="/alerting">make one</Link>).
          </span>
        ) : (
          (channels.data?.results ?? []).map((c) => (
            <label key={c.id} className="check">
              <input
                type="checkbox"
                checked={notify.includes(c.id)}
                onChange={(e) =>
                  setNotify((n) => (e.target.checked ? [...n, c.id] : n.filter((x) => x !== c.id)))
                }
              />
              {c.name}
            </label>
          ))
        )}
        {act.fieldError('notify') && <span className="field-error">{act.fieldError('notify')}</span>}
      </fieldset>
      <FormActions
        submit={editing ? 'Save changes' : 'Create trigger'}
        busy={act.busy}
        disabled={!name.trim() || queryError !== null || checking}
        {...(onCancel ? { onCancel } : {})}
      />
      <ErrorBanner error={act.error} className="form-error" />
    </Form>
  );
}
