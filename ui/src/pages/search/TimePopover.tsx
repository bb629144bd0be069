import { TIME_PRESETS } from '@shared/time-presets';
import { type KeyboardEvent, type RefObject, useEffect, useLayoutEffect, useRef } from 'react';
import { browserTimeZone } from '../reports/download';
import { RELATIVE_HINT } from './relative-range';
import type { TimePicker } from './TimePicker';
import { type RangeSel, rangeLabel, sameRange } from './time-range';

/** The time format From and To show and read. */
const FORMAT = 'YYYY-MM-DD HH:mm:ss';

/** Enter in a box of the popover applies it (and does not submit the search form it sits in). */
const onEnter = (apply: () => void) => (e: KeyboardEvent) => {
  if (e.key !== 'Enter') return;
  e.preventDefault();
  apply();
};

/**
 * The time picker's popover (a non-modal dialog under its button): a range typed, the
 * presets, the ranges applied last, and From/To. It takes the focus when it opens; a click
 * outside the picker closes it, as do Escape and the focus leaving the picker (TimePicker).
 */
export function TimePopover({
  picker,
  wrap,
}: {
  picker: TimePicker;
  wrap: RefObject<HTMLDivElement | null>;
}) {
  const { range } = picker.props;
  const dialog = useRef<HTMLDialogElement>(null);
  const textBox = useRef<HTMLInputElement>(null);
  const close = useRef(picker.close);
  close.current = picker.close;

  useEffect(() => textBox.current?.focus(), []);

  // Kept on the screen: aligned to the picker's right edge, moved right when that would
  // put its left edge off it (the picker wrapped to the start of a narrow row).
  useLayoutEffect(() => {
    const el = dialog.current;
    const left = el?.getBoundingClientRect().left ?? 0;
    if (el && left < 8) el.style.transform = `translateX(${Math.ceil(8 - left)}px)`;
  }, []);

  // A click outside the picker closes the popover.
  useEffect(() => {
    const onDown = (e: PointerEvent) => {
      if (!wrap.current?.contains(e.target as Node)) close.current(false);
    };
    document.addEventListener('pointerdown', onDown);
    return () => document.removeEventListener('pointerdown', onDown);
  }, [wrap]);

  const option = (r: RangeSel, label: string) => (
    <li key={label}>
      <button
        type="button"
        className="time-option"
        aria-current={sameRange(r, range) ? 'true' : undefined}
        onClick={() => picker.choose(r)}
      >
        {label}
      </button>
    </li>
  );

  const { textError, error } = picker;
  const textDescribed = textError ? 'range-text-hint range-text-error' : 'range-text-hint';
  const described = error ? 'range-zone range-error' : 'range-zone';
  const timeInput = (id: string, label: string, value: string, set: (v: string) => void) => (
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
        onKeyDown={onEnter(picker.applyAbsolute)}
      />
    </div>
  );

  return (
    <dialog open ref={dialog} id="time-popover" className="time-popover" aria-label="Time range">
      <div className="time-popover-main">
        <div className="field">
          <label htmlFor="range-text">Relative range</label>
          <div className="time-text-row">
            <input
              ref={textBox}
              id="range-text"
              type="text"
              autoComplete="off"
              spellCheck={false}
              placeholder="2h"
              value={picker.text}
              aria-invalid={textError ? true : undefined}
              aria-describedby={textDescribed}
              onChange={(e) => picker.setText(e.target.value)}
              onKeyDown={onEnter(picker.applyText)}
            />
            <button type="button" onClick={picker.applyText}>
              Apply
            </button>
          </div>
          <span id="range-text-hint" className="muted small-text">
            {RELATIVE_HINT}
          </span>
          {textError && (
            <p role="alert" id="range-text-error" className="error">
              {textError}
            </p>
          )}
        </div>

        <fieldset className="time-absolute">
          <legend>Absolute range</legend>
          {timeInput('range-from', 'From', picker.from, picker.setFrom)}
          {timeInput('range-to', 'To', picker.to, picker.setTo)}
          <span id="range-zone" className="muted small-text range-zone">
            {FORMAT}, 24-hour, in {browserTimeZone()}
          </span>
          <button type="button" className="secondary time-absolute-apply" onClick={picker.applyAbsolute}>
            Apply range
          </button>
          {error && (
            <p role="alert" id="range-error" className="error">
              {error}
            </p>
          )}
        </fieldset>
      </div>

      <div className="time-popover-lists">
        <fieldset>
          <legend className="time-list-title">Presets</legend>
          <ul className="time-options">
            {TIME_PRESETS.map((p) => option({ kind: 'preset', preset: p.value }, p.label))}
          </ul>
        </fieldset>
        <fieldset>
          <legend className="time-list-title">Recent</legend>
          {picker.recent.length > 0 ? (
            <ul className="time-options">{picker.recent.map((r) => option(r, rangeLabel(r)))}</ul>
          ) : (
            <p className="muted small-text">The ranges you apply show here.</p>
          )}
        </fieldset>
      </div>
    </dialog>
  );
}
