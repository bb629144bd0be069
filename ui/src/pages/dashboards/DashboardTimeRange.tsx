import { TIME_PRESETS } from '@shared/time-presets';
import { type FormEvent, useState } from 'react';
import { browserTimeZone } from '../reports/download';
import { parseCustomRange, type RangeSel, toRangeTime, windowOf } from '../search/time-range';

/** The select's value while each widget shows its own range. */
const OWN = '';
const CUSTOM = 'custom';

/** The time format From and To show and read (as on the search page). */
const FORMAT = 'YYYY-MM-DD HH:mm:ss';

/**
 * The dashboard's time range: each widget's own (as saved), one of the search page's
 * presets for every widget, or a custom From/To (ISO times, 24-hour, in the browser's
 * zone). `onChange` is told a range applied (null: each widget's own). Two parts placed
 * apart, sharing this state: the select (among the page's actions) and the From/To form
 * (a row under them).
 */
export function useDashboardRange(range: RangeSel | null, onChange: (range: RangeSel | null) => void) {
  const [open, setOpen] = useState(range?.kind === 'absolute');
  const [from, setFrom] = useState(range?.kind === 'absolute' ? toRangeTime(range.from) : '');
  const [to, setTo] = useState(range?.kind === 'absolute' ? toRangeTime(range.to) : '');
  const [error, setError] = useState<string | null>(null);
  // A range applied from elsewhere (Back, a link) shows in the form.
  const [applied, setApplied] = useState(range);
  if (applied !== range) {
    setApplied(range);
    setError(null);
    setOpen(range?.kind === 'absolute');
    if (range?.kind === 'absolute') {
      setFrom(toRangeTime(range.from));
      setTo(toRangeTime(range.to));
    }
  }

  const selected = open ? CUSTOM : range?.kind === 'preset' ? range.preset : OWN;
  const select = (value: string) => {
    if (value === CUSTOM) {
      // The form starts at the window shown (the last 24 hours for the widgets' own).
      const w = windowOf(range ?? { kind: 'preset', preset: 'last_24_hours' }, Date.now());
      setFrom(toRangeTime(Math.floor(w.ts_from)));
      setTo(toRangeTime(Math.ceil(w.ts_to)));
      setError(null);
      setOpen(true);
      return;
    }
    setOpen(false);
    onChange(value === OWN ? null : { kind: 'preset', preset: value });
  };
  const apply = (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseCustomRange(from, to);
    if (!parsed.ok) setError(parsed.error);
    else onChange(parsed.range);
  };

  return { selected, select, open, from, to, setFrom, setTo, error, apply };
}

type RangeState = ReturnType<typeof useDashboardRange>;

/** The select named "Time range": each widget's own, the presets, "Custom range…". */
export function DashboardRangeSelect({ state }: { state: RangeState }) {
  return (
    <span className="dash-range">
      <label htmlFor="dash-time-range" className="visually-hidden">
        Time range
      </label>
      <select id="dash-time-range" value={state.selected} onChange={(e) => state.select(e.target.value)}>
        <option value={OWN}>Each widget’s own range</option>
        {TIME_PRESETS.map((p) => (
          <option key={p.value} value={p.value}>
            {p.label}
          </option>
        ))}
        <option value={CUSTOM}>Custom range…</option>
      </select>
    </span>
  );
}

/** The form "Custom range": From and To, Apply range; a bad range is an alert. */
export function DashboardRangeForm({ state }: { state: RangeState }) {
  const { error } = state;
  if (!state.open) return null;
  const input = (id: string, label: string, value: string, set: (v: string) => void) => (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        className="dash-range-time"
        type="text"
        autoComplete="off"
        spellCheck={false}
        placeholder={FORMAT}
        value={value}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? 'dash-range-zone dash-range-error' : 'dash-range-zone'}
        onChange={(e) => set(e.target.value)}
      />
    </div>
  );

  return (
    <form className="dash-range-form" aria-label="Custom range" noValidate onSubmit={state.apply}>
      {input('dash-range-from', 'From', state.from, state.setFrom)}
      {input('dash-range-to', 'To', state.to, state.setTo)}
      <span id="dash-range-zone" className="muted small-text">
        {FORMAT}, 24-hour, in {browserTimeZone()}
      </span>
      <button type="submit" className="small">
        Apply range
      </button>
      {error && (
        <p role="alert" id="dash-range-error" className="error">
          {error}
        </p>
      )}
    </form>
  );
}
