import {
  cloneElement,
  createElement,
  type FormEvent,
  type InputHTMLAttributes,
  type ReactElement,
  type ReactNode,
  type SelectHTMLAttributes,
  useId,
} from 'react';
import { cls } from './util';
import './components.css';

interface ControlProps {
  id?: string;
  'aria-describedby'?: string;
  'aria-invalid'?: boolean;
}

/**
 * A labelled form control: the label names it, the hint and the error describe it
 * (aria-describedby) and an error marks it invalid. `children` is the one control
 * (input, select, textarea); it gets the id.
 */
export function Field(props: {
  label: ReactNode;
  children: ReactElement<ControlProps>;
  id?: string;
  hint?: ReactNode;
  error?: string | null;
  /** The error is announced as it appears (checks as you type), not only described. */
  live?: boolean;
  /** The id of a description outside the field (a hint under a row of fields). */
  describedBy?: string;
  className?: string;
}) {
  const auto = useId();
  const id = props.id ?? auto;
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = cls(props.hint ? hintId : null, props.describedBy, props.error ? errorId : null);
  return (
    <div className={cls('field', props.className)}>
      <label htmlFor={id}>{props.label}</label>
      {cloneElement(props.children, {
        id,
        'aria-describedby': describedBy || undefined,
        'aria-invalid': props.error ? true : undefined,
      })}
      {props.hint && (
        <span id={hintId} className="muted small-text field-hint">
          {props.hint}
        </span>
      )}
      {props.error && (
        <span id={errorId} role={props.live ? 'alert' : undefined} className="field-error">
          {props.error}
        </span>
      )}
    </div>
  );
}

/** A checkbox with its label around it. */
export function Check({ label, ...input }: { label: ReactNode } & InputHTMLAttributes<HTMLInputElement>) {
  return (
    <label className="check">
      <input type="checkbox" {...input} />
      {label}
    </label>
  );
}

/**
 * A form named by its heading (when it has a title); submitting it calls `onSubmit`
 * without reloading the page.
 */
export function Form(props: {
  title?: string;
  /** The heading's level: 2 (default) or 3. */
  level?: 2 | 3;
  className?: string;
  headingClassName?: string;
  onSubmit: () => void;
  children: ReactNode;
}) {
  const headingId = useId();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    props.onSubmit();
  };
  return (
    <form
      className={(props.className ?? 'work-form') || undefined}
      aria-labelledby={props.title ? headingId : undefined}
      onSubmit={submit}
    >
      {props.title &&
        createElement(
          `h${props.level ?? 2}`,
          { id: headingId, className: props.headingClassName },
          props.title,
        )}
      {props.children}
    </form>
  );
}

/**
 * A form's buttons: submit (disabled while busy; left out when `submit` is not given, as
 * when a dialog's work is done) and an optional cancel.
 */
export function FormActions(props: {
  submit?: ReactNode;
  busy?: boolean;
  /** Disabled for another reason than being busy (the form is not complete). */
  disabled?: boolean;
  onCancel?: () => void;
  cancel?: ReactNode;
  className?: string;
}) {
  return (
    <div className={cls('form-actions', props.className)}>
      {props.submit && (
        <button type="submit" disabled={props.busy || props.disabled}>
          {props.submit}
        </button>
      )}
      {props.onCancel && (
        <button type="button" className="secondary" onClick={props.onCancel}>
          {props.cancel ?? 'Cancel'}
        </button>
      )}
    </div>
  );
}

export type Option = string | { value: string | number; label: string };

/** A select of `options`: strings, or values with their labels. */
export function Select({
  options,
  ...select
}: { options: readonly Option[] } & SelectHTMLAttributes<HTMLSelectElement>) {
  return (
    <select {...select}>
      {options.map((o) =>
        typeof o === 'string' ? (
          <option key={o} value={o}>
            {o}
          </option>
        ) : (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ),
      )}
    </select>
  );
}
