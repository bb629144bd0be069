import { TIME_PRESETS } from '@shared/time-presets';
import { type FormEvent, useState } from 'react';
import { browserTimeZone } from '../reports/download';
import { parseCustomRange, type RangeSel, toRangeTime, type Window, windowOf } from './time-range';

/**
 * The search page's time picker: a select of presets with "Custom range…", and the
 * From/To form of a custom (absolute) range: ISO times (`YYYY-MM-DD HH:mm:ss`, 24-hour) in the
 * browser's time zone, as every time on the page, whatever the locale (a `datetime-local`
 * input shows the locale's format, 12-hour in en-US). Two parts placed
 * apart (the select in the search form, the From/To form below it) sharing one state,
 * `useTimePicker`.
 */
export interface TimePickerProps {
  /** The range applied (a new one, from anywhere, shows in the picker). */
  range: RangeSel;
  /** The window the results are of: where "Custom range…" starts. */
  shown: Window | null;
  /** While Live: the select is disabled and says so; no From/To. */
  live: boolean;
  /** A preset chosen, or a valid custom range applied. */
  onChange: (range: RangeSel) => void;
}

export interface TimePicker {
  props: TimePickerProps;
  /** The select's value: a preset, `custom` (From/To open), `zoomed` (an absolute range, From/To closed), or `` while Live. */
  selected: string;
  /** The From/To form is shown. */
  open: boolean;
  from: string;
  to: string;
  error: string | null;
  setFrom(value: string): void;
  setTo(value: string): void;
  select(value: string): void;
  apply(e?: FormEvent): void;
}

/** The select's value for an absolute range applied while From/To are closed (a zoom). */
const ZOOMED = 'zoomed';

export function useTimePicker(props: TimePickerProps): TimePicker {
  const { range, shown, live, onChange } = props;
  const [open, setOpen] = useState(range.kind === 'absolute');
  const [from, setFrom] = useState(() => (range.kind === 'absolute' ? toRangeTime(range.from) : ''));
  const [to, setTo] = useState(() => (range.kind === 'absolute' ? toRangeTime(range.to) : ''));
  const [error, setError] = useState<string | null>(null);
  // A range applied (here, by zooming, Back, the address) shows: an absolute one in From/To
  // when they are open. They do not open for it: appearing above the timeline, they would
  // move the page under the pointer of a user zooming (the select names the range instead).
  const [applied, setApplied] = useState(range);
  if (applied !== range) {
    setApplied(range);
    setError(null);
    if (range.kind === 'preset') setOpen(false);
    else {
      setFrom(toRangeTime(range.from));
      setTo(toRangeTime(range.to));
    }
  }

  return {
    props,
    selected: live ? '' : open ? 'custom' : range.kind === 'absolute' ? ZOOMED : range.preset,
    open: open && !live,
    from,
    to,
    error,
    setFrom,
    setTo,
    select(value) {
      if (value === ZOOMED) return;
      if (value === 'custom') {
        // The form starts at the window shown.
        const w = shown ?? windowOf(range, Date.now());
        setFrom(toRangeTime(w.ts_from));
        setTo(toRangeTime(w.ts_to));
        setError(null);
        setOpen(true);
        return;
      }
      setOpen(false);
      onChange({ kind: 'preset', preset: value });
    },
    apply(e) {
      e?.preventDefault();
      const parsed = parseCustomRange(from, to);
      if (!parsed.ok) setError(parsed.error);
      else onChange(parsed.range);
    },
  };
}

/** The select named "Time range": the presets and "Custom range…". */
export function TimeRangeSelect({ picker }: { picker: TimePicker }) {
  const { live } = picker.props;
  return (
    <>
      <label htmlFor="time-range" className="visually-hidden">
        Time range
      </label>
      <select
        id="time-range"
        value={picker.selected}
        disabled={live}
        title={live ? 'Live shows events as they arrive' : undefined}
        onChange={(e) => picker.select(e.target.value)}
      >
        {live && <option value="">Live (new events)</option>}
        {picker.selected === ZOOMED && <option value={ZOOMED}>Zoomed range</option>}
        {TIME_PRESETS.map((p) => (
          <option key={p.value} value={p.value}>
            {p.label}
          </option>
        ))}
        <option value="custom">Custom range…</option>
      </select>
    </>
  );
}

/** The time format From and To show and read. */
const FORMAT = 'YYYY-MM-DD HH:mm:ss';

/** The form "Custom range": From and To, Apply range; a bad range is an alert. */
export function CustomRangeForm({ picker }: { picker: TimePicker }) {
  if (!picker.open) return null;
  const { error } = picker;
  const described = error ? 'range-zone range-error' : 'range-zone';
  const input = (id: string, label: string, value: string, set: (v: string) => void) => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        className="range-time"
        type="text"
        autoComplete="off"
        spellCheck={false}
        placeholder={FORMAT}
        value={value}
        aria-invalid={error ? true : undefined}
        aria-describedby={described}
        onChange={(e) => set(e.target.value)}
      />
    </div>
  );
  return (
    <form className="custom-range" aria-label="Custom range" noValidate onSubmit={picker.apply}>
      {input('range-from', 'From', picker.from, picker.setFrom)}
      {input('range-to', 'To', picker.to, picker.setTo)}
      <span id="range-zone" className="muted small-text range-zone">
        {FORMAT}, 24-hour, in {browserTimeZone()}
      </span>
      <button type="submit">Apply range</button>
      {error && (
        <p role="alert" id="range-error" className="error">
          {error}
        </p>
      )}
    </form>
  );
}
