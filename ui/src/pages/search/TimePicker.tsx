import { type FocusEvent, type KeyboardEvent, type RefObject, useRef, useState } from 'react';
import { browserTimeZone } from '../reports/download';
import { loadRecent, rememberRange } from './recent-ranges';
import { parseRelative } from './relative-range';
import { TimePopover } from './TimePopover';
import {
  parseCustomRange,
  type RangeSel,
  rangeLabel,
  shiftWindow,
  toRangeTime,
  type Window,
  windowOf,
} from './time-range';
import './time-picker.css';

/**
 * The search page's time picker: a button naming the range applied, which opens one
 * popover (a range typed, `2h`; the presets; the ranges applied last; From/To as ISO times,
 * `YYYY-MM-DD HH:mm:ss` 24-hour, in the browser's zone, as every time on the page), with
 * "Shift earlier" and "Shift later" beside it (the window moved by its own length, then
 * absolute). It sits in the search form: the popover holds no form of its own, and Enter
 * in its boxes applies what they hold instead of submitting the search.
 */
export interface TimePickerProps {
  /** The range applied (a new one, from anywhere, shows on the button). */
  range: RangeSel;
  /** The window the results are of: where From/To start and what a shift moves. */
  shown: Window | null;
  /** While Live: the picker is disabled and says so. */
  live: boolean;
  /** A range applied from the picker. */
  onChange: (range: RangeSel) => void;
}

export interface TimePicker {
  props: TimePickerProps;
  /** The popover is open. */
  open: boolean;
  buttonRef: RefObject<HTMLButtonElement | null>;
  /** Opens the popover at the range applied, or closes it. */
  toggle(): void;
  /** Closes the popover, the focus back on its button when `focusButton`. */
  close(focusButton: boolean): void;
  /** The relative range typed, and why it is not one. */
  text: string;
  textError: string | null;
  setText(value: string): void;
  applyText(): void;
  from: string;
  to: string;
  /** Why From/To are not a range. */
  error: string | null;
  setFrom(value: string): void;
  setTo(value: string): void;
  applyAbsolute(): void;
  /** The ranges applied last, newest first. */
  recent: RangeSel[];
  /** Applies a preset or a recent range. */
  choose(range: RangeSel): void;
}

const storage = () => window.localStorage;

/** The window From/To start at and a shift moves: the one shown (the range itself when absolute). */
const baseWindow = ({ range, shown }: TimePickerProps): Window =>
  range.kind === 'absolute' ? windowOf(range, 0) : (shown ?? windowOf(range, Date.now()));

const UNITS = [
  ['day', 86_400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
] as const;

/** How far a shift moves, in its two largest units: "1 hour", "2 days", "15 hours 3 minutes". */
function spanText(seconds: number): string {
  const parts: string[] = [];
  let rest = seconds;
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 && parts.length < 2) parts.push(`${n} ${unit}${n === 1 ? '' : 's'}`);
    else if (parts.length > 0) break;
  }
  return parts.join(' ');
}

export function useTimePicker(props: TimePickerProps): TimePicker {
  const { range, live, onChange } = props;
  const [open, setOpen] = useState(false);
  const [text, setText] = useState('');
  const [textError, setTextError] = useState<string | null>(null);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [recent, setRecent] = useState<RangeSel[]>([]);
  const buttonRef = useRef<HTMLButtonElement>(null);
  // A range applied from elsewhere (a zoom, Back) closes the popover: what it offered was
  // about the range before.
  const [applied, setApplied] = useState(range);
  if (applied !== range) {
    setApplied(range);
    setOpen(false);
  }

  const close = (focusButton: boolean) => {
    setOpen(false);
    if (focusButton) buttonRef.current?.focus();
  };
  const apply = (r: RangeSel) => {
    setRecent(rememberRange(storage, r));
    onChange(r);
    close(true);
  };

  return {
    props,
    open: open && !live,
    buttonRef,
    toggle() {
      if (open) return close(false);
      const w = baseWindow(props);
      setFrom(toRangeTime(w.ts_from));
      setTo(toRangeTime(w.ts_to));
      setError(null);
      setText('');
      setTextError(null);
      setRecent(loadRecent(storage));
      setOpen(true);
    },
    close,
    text,
    textError,
    setText(value) {
      setText(value);
      setTextError(null);
    },
    applyText() {
      const parsed = parseRelative(text);
      if (!parsed.ok) setTextError(parsed.error);
      else apply({ kind: 'preset', preset: parsed.preset });
    },
    from,
    to,
    error,
    setFrom,
    setTo,
    applyAbsolute() {
      const parsed = parseCustomRange(from, to);
      if (!parsed.ok) setError(parsed.error);
      else apply(parsed.range);
    },
    recent,
    choose: apply,
  };
}

/** The time picker: Shift earlier, the range's button and its popover, Shift later. */
export function TimePicker({ picker }: { picker: TimePicker }) {
  const { props, open } = picker;
  const { range, live, onChange } = props;
  const wrap = useRef<HTMLDivElement>(null);
  const w = baseWindow(props);
  const span = spanText(Math.max(1, Math.round(w.ts_to - w.ts_from)));
  // A window reaching now has nothing later yet.
  const laterDisabled = live || range.kind !== 'absolute' || range.to >= Date.now() / 1000;
  const shift = (direction: -1 | 1) => onChange(shiftWindow(baseWindow(props), direction));

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== 'Escape' || !open) return;
    e.preventDefault();
    e.stopPropagation();
    picker.close(true);
  };
  // The focus moving on past the picker (Tab) closes the popover; leaving the window does not.
  const onBlur = (e: FocusEvent) => {
    const next = e.relatedTarget;
    if (open && next instanceof Node && !wrap.current?.contains(next)) picker.close(false);
  };

  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: Escape or the focus leaving, anywhere in the picker, closes the popover.
    <div className="time-picker" ref={wrap} onKeyDown={onKeyDown} onBlur={onBlur}>
      <button
        type="button"
        className="secondary time-shift"
        disabled={live}
        title={`Move the window ${span} earlier`}
        onClick={() => shift(-1)}
      >
        <span aria-hidden="true">‹</span>
        <span className="visually-hidden">Shift earlier</span>
      </button>
      <button
        ref={picker.buttonRef}
        type="button"
        className="secondary time-range-button"
        aria-haspopup="dialog"
        aria-expanded={open}
        aria-controls={open ? 'time-popover' : undefined}
        disabled={live}
        title={
          live
            ? 'Live shows events as they arrive'
            : range.kind === 'absolute'
              ? `${rangeLabel(range)}, in ${browserTimeZone()}`
              : undefined
        }
        onClick={picker.toggle}
      >
        <span className="visually-hidden">Time range: </span>
        <span className="time-range-label">{live ? 'Live (new events)' : rangeLabel(range)}</span>
        <span aria-hidden="true" className="time-range-caret">
          ▾
        </span>
      </button>
      {open && <TimePopover picker={picker} wrap={wrap} />}
      <button
        type="button"
        className="secondary time-shift"
        disabled={laterDisabled}
        title={laterDisabled ? undefined : `Move the window ${span} later`}
        onClick={() => shift(1)}
      >
        <span aria-hidden="true">›</span>
        <span className="visually-hidden">Shift later</span>
      </button>
    </div>
  );
}
