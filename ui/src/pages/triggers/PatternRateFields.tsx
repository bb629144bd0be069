import type { ChangeEvent } from 'react';
import { Field, Select } from '../../components/Field';
import { PATTERN_RATE_BASELINES, PATTERN_RATE_DIRECTIONS, type PatternRateValues } from './trigger-condition';
import './pattern-rate.css';

type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

/**
 * The fields of the condition "A kind of message surges or disappears (pattern rate)"
 * (docs/api/alerting.md): each pattern counted per window and compared with its baseline.
 */
export function PatternRateFields(props: {
  text: (name: keyof PatternRateValues) => { value: string; onChange: (e: ChangeEvent<Control>) => void };
  fieldError: (key: string) => string | null;
}) {
  const { text, fieldError } = props;
  return (
    <div className="pattern-rate-fields">
      <Field
        label="Window (seconds)"
        id="trigger-rate-window"
        hint="Each kind of message counted per window."
        error={fieldError('condition.window_seconds')}
      >
        <input type="number" min={10} max={86_400} step={1} required {...text('rateWindow')} />
      </Field>
      <Field label="Baseline" id="trigger-rate-baseline" error={fieldError('condition.baseline')}>
        <Select options={PATTERN_RATE_BASELINES} {...text('rateBaseline')} />
      </Field>
      <Field label="Direction" id="trigger-rate-direction" error={fieldError('condition.direction')}>
        <Select options={PATTERN_RATE_DIRECTIONS} {...text('rateDirection')} />
      </Field>
      <Field
        label="Least ratio"
        id="trigger-rate-ratio"
        hint="Times more (or fewer) than its baseline."
        error={fieldError('condition.min_ratio')}
      >
        <input type="number" min={1} max={1000} step="any" required {...text('rateRatio')} />
      </Field>
      <Field
        label="Least count"
        id="trigger-rate-count"
        hint="In the window, or the baseline for a drop."
        error={fieldError('condition.min_count')}
      >
        <input type="number" min={1} step={1} required {...text('rateCount')} />
      </Field>
      <Field
        label="Steady windows"
        id="trigger-rate-steady"
        hint="Busy windows before one can be gone."
        error={fieldError('condition.steady_windows')}
      >
        <input type="number" min={2} max={100} step={1} required {...text('rateSteady')} />
      </Field>
    </div>
  );
}
