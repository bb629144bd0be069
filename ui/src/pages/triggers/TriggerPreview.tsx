import { useEffect, useMemo, useState } from 'react';
import { ApiError, errorText, isAbort, runQuery, type TimelineResults } from '../../api';
import { formatCount, formatTs } from '../../format';
import {
  HISTORY_SECONDS,
  type History,
  type Preview,
  type PreviewCondition,
  previewThreshold,
  RESOLUTION_SECONDS,
} from './trigger-preview';

/** Columns of the chart: one per 6 minutes of the 24 h. */
const COLUMNS = 240;
const CHART_HEIGHT = 48;
/** The firings' ticks at the top, and the room kept above the highest column for them. */
const TICK = 6;
/** Firings listed by time; the rest are counted. */
const LISTED = 8;

/**
 * The query's matches over the 24 h before `nowMs`, per RESOLUTION_SECONDS bucket (one
 * Timeline query; each bucket's count is put at its first second).
 */
export async function loadHistory(query: string, nowMs: number, signal: AbortSignal): Promise<History> {
  const r = RESOLUTION_SECONDS;
  const to = Math.ceil(nowMs / 1000 / r) * r;
  const from = to - HISTORY_SECONDS;
  const q = await runQuery<TimelineResults>(
    {
      type: 'Timeline',
      params: { query, time_range: { ts_from: from, ts_to: to }, interval: `${r}s` },
    },
    { signal, onUpdate: () => {} },
  );
  if (q.status === 'ERROR') throw new Error(q.error ?? 'The query failed.');
  const counts = (q.results.buckets ?? []).filter((b) => b.count > 0).map((b) => [b.ts, b.count] as const);
  return { from, to, counts };
}

type Loaded = { query: string; history: History } | { query: string; error: string; invalid: boolean };

export interface HistoryState {
  history: History | null;
  /** Why there is none: the query's problem (`invalid`), or the request's. */
  error: string | null;
  invalid: boolean;
}

/**
 * The matches of `query` over the last 24 h, read 400 ms after it last changed; an answer
 * for a query since replaced is dropped (and its request aborted).
 */
export function useHistory(query: string): HistoryState {
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  useEffect(() => {
    const ctl = new AbortController();
    const timer = setTimeout(() => {
      loadHistory(query, Date.now(), ctl.signal)
        .then((history) => {
          if (!ctl.signal.aborted) setLoaded({ query, history });
        })
        .catch((err) => {
          if (ctl.signal.aborted || isAbort(err)) return;
          const own =
            err instanceof ApiError && err.status === 400 ? err.errors?.['params.query'] : undefined;
          setLoaded({ query, error: own?.length ? own.join(' ') : errorText(err), invalid: !!own?.length });
        });
    }, 400);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [query]);
  if (!loaded || loaded.query !== query) return { history: null, error: null, invalid: false };
  return 'error' in loaded
    ? { history: null, error: loaded.error, invalid: loaded.invalid }
    : { history: loaded.history, error: null, invalid: false };
}

/** `value` once it has stayed the same for `ms`. */
function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

const plural = (n: number, one: string, many: string) => `${formatCount(n)} ${n === 1 ? one : many}`;

/** A window's length as people say it: "5-minute", "90-second", "2-hour". */
export function windowName(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600}-hour`;
  if (seconds % 60 === 0) return `${seconds / 60}-minute`;
  return `${seconds}-second`;
}

/** A firing's time: local `MM-DD HH:MM:SS`. */
const firedAt = (at: number) => formatTs(at).slice(5, 19);

/** What the preview says in one sentence (the status line). */
export function previewSentence(p: Preview, c: PreviewCondition): string {
  const n = p.fired.length;
  const fired = n === 0 ? 'Would not have fired' : `Would have fired ${plural(n, 'time', 'times')}`;
  const held = p.heldBack
    ? ` (${plural(p.heldBack, 'more crossing', 'more crossings')} held back by the cooldown)`
    : '';
  const silence = c.op === 'lt' || c.op === 'lte';
  const extreme =
    p.extreme === null
      ? ''
      : ` ${silence ? 'Quietest' : 'Busiest'} ${windowName(c.window_seconds)} window: ${plural(p.extreme, 'match', 'matches')}.`;
  return `${fired} in the last 24 h${held}.${extreme}`;
}

/**
 * The preview of a threshold condition over the history: a sentence, a chart of the
 * window's count along the 24 h with the threshold and the firings, and their times.
 * `condition` null: the form's values are not a condition yet (said instead).
 */
export function TriggerPreview(props: HistoryState & { condition: PreviewCondition | null }) {
  const condition = useDebounced(props.condition, 250);
  const { history } = props;
  const preview = useMemo(
    () => (history && condition ? previewThreshold(history, condition, COLUMNS) : null),
    [history, condition],
  );

  let status: string;
  if (props.invalid) status = 'No preview until the query is valid.';
  else if (props.error) status = `No preview: ${props.error}`;
  else if (!props.condition)
    status = 'The preview needs N as a whole number, 0 or more, and a window from 1 s to 24 h.';
  else if (!history) status = 'Reading the last 24 h of matches…';
  else if (!preview || !condition) status = 'Judging the last 24 h…';
  else status = previewSentence(preview, condition);

  return (
    <section className="trigger-preview" aria-labelledby="trigger-preview-heading">
      <h3 id="trigger-preview-heading">The last 24 hours</h3>
      <p role="status" className="trigger-preview-status">
        {status}
      </p>
      {preview && condition && history && props.condition && (
        <>
          <Chart preview={preview} condition={condition} from={history.from} />
          <div className="trigger-preview-axis muted small-text" aria-hidden="true">
            <span>{formatTs(history.from).slice(5, 16)}</span>
            <span className="trigger-chart-legend">threshold</span>
            <span className="trigger-chart-legend fired">firing</span>
            <span>now</span>
          </div>
          {preview.fired.length > 0 && (
            <ol className="trigger-fired" aria-label="Firings">
              {preview.fired.slice(0, LISTED).map((f) => (
                <li key={f.at}>
                  <time dateTime={new Date(f.at * 1000).toISOString()}>{firedAt(f.at)}</time>{' '}
                  <span className="muted">({plural(f.count, 'match', 'matches')})</span>
                </li>
              ))}
              {preview.fired.length > LISTED && (
                <li className="muted">and {formatCount(preview.fired.length - LISTED)} more</li>
              )}
            </ol>
          )}
        </>
      )}
    </section>
  );
}

/** The window's count along the 24 h (a column per 6 minutes), the threshold dashed, firings marked. */
function Chart(props: { preview: Preview; condition: PreviewCondition; from: number }) {
  const { preview, condition } = props;
  const { columns } = preview;
  const most = Math.max(0, ...columns.map((v) => v ?? 0));
  const top = Math.max(condition.value, most, 1) * 1.05;
  const y = (v: number) => (CHART_HEIGHT - (v / top) * (CHART_HEIGHT - TICK)).toFixed(2);
  // A stepped area per run of judged columns (a silence condition's first window is not judged).
  const runs: [number, number][][] = [];
  let run: [number, number][] | null = null;
  for (let i = 0; i < columns.length; i++) {
    const v = columns[i] ?? null;
    if (v === null) run = null;
    else {
      if (!run) {
        run = [];
        runs.push(run);
      }
      run.push([i, v]);
    }
  }
  const areas = runs.map((r) => {
    const steps = r.map(([i, v]) => `L${i},${y(v)} L${i + 1},${y(v)}`).join(' ');
    return `M${r[0]?.[0] ?? 0},${CHART_HEIGHT} ${steps} L${(r.at(-1)?.[0] ?? 0) + 1},${CHART_HEIGHT} Z`;
  });
  const marks = preview.fired.map((f) =>
    Math.min(COLUMNS - 0.5, Math.max(0.5, ((f.at - props.from) / HISTORY_SECONDS) * COLUMNS)),
  );
  const label =
    `Matches in each ${windowName(condition.window_seconds)} window over the last 24 h` +
    `${preview.extreme === null ? '' : `, at most ${formatCount(most)}`}, against the threshold ` +
    `${formatCount(condition.value)}; ${plural(preview.fired.length, 'firing', 'firings')} marked.`;
  return (
    <svg
      className="trigger-chart"
      viewBox={`0 0 ${COLUMNS} ${CHART_HEIGHT}`}
      preserveAspectRatio="none"
      role="img"
      aria-label={label}
    >
      {areas.map((d) => (
        <path key={d} d={d} className="trigger-chart-area" />
      ))}
      {marks.map((x, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: two firings may share a column
        <g key={i}>
          <line x1={x} x2={x} y1={0} y2={CHART_HEIGHT} className="trigger-chart-fired" />
          <line x1={x} x2={x} y1={0} y2={TICK} className="trigger-chart-tick" />
        </g>
      ))}
      <line
        x1={0}
        x2={COLUMNS}
        y1={y(condition.value)}
        y2={y(condition.value)}
        className="trigger-chart-threshold"
      />
    </svg>
  );
}
