import type { ReactNode } from 'react';
import { Field } from '../../components/Field';
import { SmallButton } from '../../components/feedback';
import { formatInZone, type PreviewState, viewerZone } from './schedule-times';

/** One-click crons (at 08:00 in the schedule's zone). */
const PRESETS = [
  { label: 'Every day', cron: '0 8 * * *' },
  { label: 'Every Monday', cron: '0 8 * * 1' },
  { label: 'First of the month', cron: '0 8 1 * *' },
] as const;

/**
 * The cron: its text, presets, and under it the server's reading and next 5 runs in the
 * schedule's zone and the viewer's (a status text), or the server's 400 at the field.
 */
export function CronField(props: {
  value: string;
  onChange: (cron: string) => void;
  zone: string;
  state: PreviewState;
  /** The server's 400 on `cron` at the last save, when the preview has none. */
  saveError: string | null;
  /** The time zone's field, on the cron's line. */
  zoneField: ReactNode;
}) {
  const { preview, error, checking } = props.state;
  const mine = viewerZone();
  const shownZone = preview?.time_zone ?? props.zone;
  return (
    <div className="cron-block">
      <div className="cron-row">
        <Field
          label="Cron"
          id="schedule-cron"
          live
          hint="minute hour day-of-month month day-of-week"
          error={error?.field === 'cron' ? error.text : props.saveError}
        >
          <input
            className="mono"
            required
            maxLength={100}
            spellCheck={false}
            autoComplete="off"
            placeholder="0 8 * * 1"
            value={props.value}
            onChange={(e) => props.onChange(e.target.value)}
          />
        </Field>
        <fieldset className="cron-presets">
          <legend>Presets</legend>
          <div className="cron-preset-buttons">
            {PRESETS.map((p) => (
              <SmallButton
                key={p.label}
                aria-pressed={props.value === p.cron}
                onClick={() => props.onChange(p.cron)}
              >
                {p.label}
              </SmallButton>
            ))}
          </div>
        </fieldset>
        {props.zoneField}
      </div>
      <div role="status" aria-label="Next runs" aria-busy={checking} className="cron-preview">
        {preview ? (
          <>
            <p className="cron-description">
              Runs {preview.description}
              {checking ? <span className="muted"> (checking…)</span> : null}
            </p>
            <table className="list cron-runs">
              <caption className="visually-hidden">The next {preview.next_runs.length} runs</caption>
              <thead>
                <tr>
                  <th scope="col">In {shownZone}</th>
                  {mine !== shownZone && <th scope="col">Your time ({mine})</th>}
                </tr>
              </thead>
              <tbody>
                {preview.next_runs.map((at) => (
                  <tr key={at}>
                    <td>
                      <time dateTime={at}>{formatInZone(at, shownZone)}</time>
                    </td>
                    {mine !== shownZone && <td>{formatInZone(at)}</td>}
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        ) : (
          <p className="muted">
            {checking
              ? 'Checking the cron…'
              : error
                ? 'No runs to show until the cron and time zone are valid.'
                : 'Type a cron or pick a preset to see its next runs.'}
          </p>
        )}
      </div>
    </div>
  );
}
