import { useState } from 'react';
import { api } from '../../api';
import { Field, Form, FormActions, Select } from '../../components/Field';
import { ErrorBanner } from '../../components/feedback';
import { type Action, useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { cls } from '../../components/util';
import {
  type Channel,
  type ChannelValues,
  configOf,
  initialValues,
  isComplete,
  KEPT_SECRET,
  type KindField,
  kindOf,
  SEVERITIES,
  type Severity,
  TYPES,
} from './channel-kinds';
import './channel-form.css';

type FormOf = ReturnType<typeof useForm<ChannelValues>>;
/** The form's values by name: a kind's section names its own (channel-kinds/). */
type ValueName = Parameters<FormOf['text']>[0];

/** The answer of `POST /api/channels/{id}/test`. */
export interface TestOutcome {
  sent: boolean;
  error: string | null;
  duration_ms: number;
}

/** A test's outcome as a sentence. */
export const outcomeText = (r: TestOutcome) =>
  r.sent ? `Sent in ${r.duration_ms} ms.` : `Not sent: ${r.error ?? 'failed'}.`;

/**
 * A new channel, or (`editing`) changes to one. Keys, secrets and Slack or Teams URLs
 * read back masked: shown so, and sent back as read unless edited, they keep their value.
 */
export function ChannelForm({
  editing,
  onSaved,
  onCancel,
}: {
  editing?: Channel;
  onSaved: (c: Channel) => void;
  onCancel?: () => void;
}) {
  const form = useForm<ChannelValues>(() => initialValues(editing));
  const { type } = form.values;
  const act = useAction();
  const submit = () =>
    act.run(async () => {
      const body = { name: form.values.name.trim(), type, config: configOf(form.values, editing) };
      const c = editing
        ? await api<Channel>(`/api/channels/${editing.id}`, { method: 'PATCH', body })
        : await api<Channel>('/api/channels', { body });
      if (!editing) form.reset();
      onSaved(c);
    });
  const error = (key: string) => act.fieldError(`config.${key}`) ?? act.fieldError(`config.${key}[0]`);
  const secretHint = (name: ValueName, unset: string) =>
    editing?.type === type && form.values[name] === KEPT_SECRET
      ? 'Saved (shown masked): keep it as it is, or type a new one.'
      : unset;
  return (
    <Form
      title={editing ? `Edit channel “${editing.name}”` : 'New channel'}
      className="work-form channel-form"
      onSubmit={submit}
    >
      <Field label="Name" id="channel-name" error={act.fieldError('name')}>
        <input required maxLength={200} {...form.text('name')} />
      </Field>
      <Field label="Type" id="channel-type" error={act.fieldError('type')}>
        <Select options={TYPES} {...form.text('type')} />
      </Field>
      {kindOf(type).fields.map((field) => (
        <KindControl
          key={'name' in field ? field.name : 'map' in field ? field.map : 'template'}
          field={field}
          form={form}
          error={error}
          secretHint={secretHint}
        />
      ))}
      {editing ? (
        // Send test beside Save and Cancel: the one row of buttons of the form.
        <div className="form-actions">
          <button type="submit" disabled={act.busy || !isComplete(form.values, editing)}>
            Save changes
          </button>
          {onCancel && (
            <button type="button" className="secondary" onClick={onCancel}>
              Cancel
            </button>
          )}
          <SendTest channel={editing} />
        </div>
      ) : (
        <FormActions submit="Create channel" busy={act.busy} disabled={!isComplete(form.values)} />
      )}
      <ErrorBanner error={act.error} className="form-error" />
    </Form>
  );
}

/**
 * One control of the selected kind's section (channel-kinds/<kind>.ts declares them): drawn
 * alike for every kind, its id `channel-<name>` and its error the API's `config.<name>`.
 */
function KindControl({
  field,
  form,
  error,
  secretHint,
}: {
  field: KindField<string>;
  form: FormOf;
  error: (key: string) => string | null;
  secretHint: (name: ValueName, unset: string) => string;
}) {
  if ('template' in field) return <TemplateFields form={form} error={error} {...field.template} />;
  if ('map' in field)
    return (
      <MapFields
        legend={field.legend}
        hint={field.hint}
        prefix={field.map}
        choices={field.choices}
        form={form}
        error={(s) => error(s ? `${field.map}_map.${s}` : `${field.map}_map`)}
      />
    );
  const name = field.name as ValueName;
  const secret = field.input === 'secret';
  return (
    <Field
      label={field.label}
      id={`channel-${field.name.replaceAll('_', '-')}`}
      className={field.grow ? 'grow' : undefined}
      hint={secret ? secretHint(name, field.hint ?? '') : field.hint}
      error={error(field.name)}
    >
      {field.options ? (
        <Select options={field.options} {...form.text(name)} />
      ) : (
        <input
          type={secret ? 'password' : field.input}
          autoComplete={secret ? 'new-password' : undefined}
          className={field.mono ? 'mono' : undefined}
          placeholder={field.placeholder}
          {...form.text(name)}
        />
      )}
    </Field>
  );
}

/** A severity map: a select of `choices` for each trigger severity, each with its error. */
function MapFields(props: {
  legend: string;
  hint: string;
  prefix: 'severity' | 'priority';
  choices: readonly string[];
  form: FormOf;
  error: (severity?: Severity) => string | null;
}) {
  const hintId = `channel-${props.prefix}-hint`;
  const whole = props.error();
  return (
    <fieldset className="channel-map" aria-describedby={hintId}>
      <legend>{props.legend}</legend>
      <div className="channel-map-row">
        {SEVERITIES.map((s) => (
          <Field
            key={s}
            label={s.charAt(0).toUpperCase() + s.slice(1)}
            id={`channel-${props.prefix}-${s}`}
            error={props.error(s)}
          >
            <Select options={props.choices} {...props.form.text(`${props.prefix}_${s}`)} />
          </Field>
        ))}
      </div>
      <span id={hintId} className="muted small-text field-hint">
        {props.hint}
      </span>
      {whole && <span className="field-error">{whole}</span>}
    </fieldset>
  );
}

/** A webhook's body template and content type, the template's variables beside it. */
function TemplateFields({
  form,
  error,
  variables,
  contentTypes,
}: {
  form: FormOf;
  error: (key: string) => string | null;
} & Extract<KindField<string>, { template: unknown }>['template']) {
  // Folded while unused, so a new channel's form stays short; open once there is a template
  // or a content type, and while either is refused.
  const [open, setOpen] = useState(() => Boolean(form.values.body_template || form.values.content_type));
  const refused = Boolean(error('body_template') || error('content_type'));
  return (
    <details
      className="channel-template-fold"
      open={open || refused}
      onToggle={(e) => setOpen(e.currentTarget.open)}
    >
      <summary>Body template and content type</summary>
      <div className="channel-template">
        <Field
          label="Body template"
          id="channel-body-template"
          className="channel-template-text"
          hint={
            <>
              Optional: sent instead of the JSON notification. <code>{'{{name}}'}</code> escapes for the
              content type, <code>{'{{{name}}}'}</code> does not; <code>{'{{#samples}}…{{/samples}}'}</code>{' '}
              repeats for each item, <code>{'{{^name}}…{{/name}}'}</code> shows when it is empty.
            </>
          }
          error={error('body_template')}
        >
          <textarea
            rows={9}
            spellCheck={false}
            className="code-input"
            placeholder={'{"text": "{{headline}}", "link": "{{search_url}}"}'}
            {...form.text('body_template')}
          />
        </Field>
        <aside className="channel-variables" aria-labelledby="channel-variables-heading">
          <h3 id="channel-variables-heading">Variables</h3>
          {variables.map((group) => (
            <div key={group.title}>
              <h4>{group.title}</h4>
              <ul>
                {group.names.map((n) => (
                  <li key={n}>
                    <code>{n}</code>
                  </li>
                ))}
              </ul>
              {group.note && <p>{group.note}</p>}
            </div>
          ))}
        </aside>
        <Field
          label="Content type"
          id="channel-content-type"
          hint="Default application/json; another type needs a body template."
          error={error('content_type')}
        >
          <input
            className="mono"
            list="channel-content-types"
            placeholder="application/json"
            {...form.text('content_type')}
          />
        </Field>
        <datalist id="channel-content-types">
          {contentTypes.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
      </div>
    </details>
  );
}

/** "Send test": a test notification through the channel as saved, and its outcome. */
function SendTest({ channel }: { channel: Channel }) {
  const act: Action = useAction();
  const [outcome, setOutcome] = useState('');
  const send = () =>
    act.run(async () => {
      setOutcome('Sending…');
      const r = await api<TestOutcome>(`/api/channels/${channel.id}/test`, { method: 'POST' });
      setOutcome(outcomeText(r));
    });
  return (
    <>
      <button type="button" className="secondary" disabled={act.busy} onClick={send}>
        Send test
      </button>
      <span role="status" className={cls('channel-test', act.error ? 'error-text' : 'muted small-text')}>
        {act.error ? `Not sent: ${act.error}` : outcome || 'Sends with the saved settings.'}
      </span>
    </>
  );
}
