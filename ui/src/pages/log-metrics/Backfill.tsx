import { useCallback, useEffect, useState } from 'react';
import { api } from '../../api';
import { Dialog } from '../../components/Dialog';
import { Field, Form, FormActions } from '../../components/Field';
import { ErrorBanner } from '../../components/feedback';
import { type Action, useAction } from '../../components/useAction';
import { useForm } from '../../components/useForm';
import { type BackfillJob, eventsText, fromLocalInput, type LogMetric, toLocalInput } from './log-metric';

/** How often a running job is read again. */
const POLL_MS = 1000;
const DAY = 86_400;

/**
 * A backfill of a metric: `start(from, to)` posts it (Unix seconds), then the job is read
 * again until it is DONE or ERROR (a read that fails is tried at the next tick).
 */
export function useBackfill(metricId: number, onFinished?: (job: BackfillJob) => void) {
  const act = useAction();
  const [job, setJob] = useState<BackfillJob | null>(null);
  const running = job?.status === 'RUNNING' ? job.id : null;

  useEffect(() => {
    if (running === null) return;
    const ctl = new AbortController();
    const timer = setInterval(() => {
      api<BackfillJob>(`/api/log-metrics/jobs/${running}`, { signal: ctl.signal })
        .then((j) => {
          setJob(j);
          if (j.status !== 'RUNNING') onFinished?.(j);
        })
        .catch(() => {});
    }, POLL_MS);
    return () => {
      clearInterval(timer);
      ctl.abort();
    };
  }, [running, onFinished]);

  const start = useCallback(
    (from: number, to: number) =>
      act.run(async () => {
        const j = await api<BackfillJob>(`/api/log-metrics/${metricId}/backfill`, { body: { from, to } });
        setJob(j);
        if (j.status !== 'RUNNING') onFinished?.(j);
        return j;
      }),
    [act.run, metricId, onFinished],
  );
  /** The last 24 hours up to now. */
  const lastDay = useCallback(() => {
    const now = Math.ceil(Date.now() / 1000);
    return start(now - DAY, now);
  }, [start]);
  return { act, job, start, lastDay, running: running !== null || act.busy };
}

/** A job's progress: a progress bar while it runs, then what it counted or why it failed. */
export function BackfillProgress({ job }: { job: BackfillJob | null }) {
  if (!job) return <p role="status" className="backfill-status" />;
  const pct = Math.round(job.progress * 100);
  return (
    <div className="backfill-progress">
      {job.status === 'RUNNING' && <progress aria-label="Backfill progress" max={1} value={job.progress} />}
      <p role="status" className={job.status === 'ERROR' ? 'backfill-status error-text' : 'backfill-status'}>
        {job.status === 'RUNNING'
          ? `Backfill running: ${pct} %, ${eventsText(job.events)} counted so far.`
          : job.status === 'DONE'
            ? `Backfill DONE: ${eventsText(job.events)} counted.`
            : `Backfill ERROR: ${job.error ?? 'it stopped'}.`}
      </p>
    </div>
  );
}

/** The range a backfill's 400 names (`from`, `to`) at its fields. */
const rangeErrors = (act: Action) => ({ from: act.fieldError('from'), to: act.fieldError('to') });

/** "Backfill": a dialog with From and To (the last 24 h by default), the job's progress once started. */
export function BackfillDialog(props: { metric: LogMetric; onClose: () => void; onFinished?: () => void }) {
  const { metric, onFinished } = props;
  const now = Math.ceil(Date.now() / 1000);
  const form = useForm(() => ({ from: toLocalInput(now - DAY), to: toLocalInput(now) }));
  const finished = useCallback(() => onFinished?.(), [onFinished]);
  const backfill = useBackfill(metric.id, finished);
  const { act, job } = backfill;
  const errors = rangeErrors(act);
  const submit = () => {
    const from = fromLocalInput(form.values.from);
    const to = fromLocalInput(form.values.to);
    if (from === null || to === null) return;
    void backfill.start(from, to);
  };
  return (
    <Dialog label={`Backfill ${metric.name}`} onClose={props.onClose}>
      <Form onSubmit={submit} className="">
        <h2>Backfill “{metric.name}”</h2>
        <p className="muted">
          Counts the matching events stored before counting began (
          {new Date(metric.counting_since).toLocaleString()}) into the metric, in the background. Ranges
          backfilled before are not counted twice.
        </p>
        <div className="metric-range">
          <Field label="From" error={errors.from}>
            <input type="datetime-local" required disabled={!!job} {...form.text('from')} />
          </Field>
          <Field label="To" error={errors.to}>
            <input type="datetime-local" required disabled={!!job} {...form.text('to')} />
          </Field>
        </div>
        <BackfillProgress job={job} />
        <ErrorBanner error={act.error} />
        <FormActions
          submit={job ? undefined : 'Start backfill'}
          busy={act.busy}
          onCancel={props.onClose}
          cancel={job ? 'Close' : 'Cancel'}
        />
      </Form>
    </Dialog>
  );
}
