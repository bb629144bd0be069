import { useEffect, useState } from 'react';
import { ApiError, api, errorText, isAbort, type Schemas } from '../../api';

/** A report schedule as the API answers it. */
export type Schedule = Schemas['Schedule'];

/** What `GET /api/schedules/preview` answers: the server's reading and next runs. */
export interface CronPreview {
  cron: string;
  time_zone: string;
  description: string;
  next_runs: string[];
}

/** Every IANA zone the browser knows (UTC first): the time zone picker's list. */
export function timeZones(): string[] {
  let zones: string[] = [];
  try {
    zones = Intl.supportedValuesOf('timeZone');
  } catch {
    // An older browser: the field still takes any name, the server judges it.
  }
  return ['UTC', ...zones.filter((z) => z !== 'UTC')];
}

const pad = (n: string | undefined) => n ?? '';

/**
 * An instant as the wall clock of `zone` reads it: `Mon 2026-11-30 08:00`; `zone`
 * undefined is the viewer's own. An unknown zone falls back to UTC.
 */
export function formatInZone(iso: string, zone?: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  let parts: Intl.DateTimeFormatPart[];
  const options: Intl.DateTimeFormatOptions = {
    weekday: 'short',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  };
  try {
    parts = new Intl.DateTimeFormat('en-US', {
      ...options,
      ...(zone ? { timeZone: zone } : {}),
    }).formatToParts(d);
  } catch {
    parts = new Intl.DateTimeFormat('en-US', { ...options, timeZone: 'UTC' }).formatToParts(d);
  }
  const p = Object.fromEntries(parts.map((x) => [x.type, x.value]));
  return `${pad(p.weekday)} ${pad(p.year)}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)}`;
}

/** The viewer's zone, as the browser names it. */
export const viewerZone = () => {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
};

const previewPath = (cron: string, zone: string, count: number) =>
  `/api/schedules/preview?${new URLSearchParams({ cron, time_zone: zone || 'UTC', count: String(count) })}`;

export interface PreviewState {
  preview: CronPreview | null;
  /** The server's 400, by the parameter it names (`cron`, `time_zone`); `other` for the rest. */
  error: { field: 'cron' | 'time_zone' | 'other'; text: string } | null;
  /** A check is under way (the typing paused, the answer not in). */
  checking: boolean;
}

/**
 * The server's reading of a cron in a zone and its next `count` runs, asked 400 ms after
 * the last change: the server is the truth for zones and daylight saving. The last good
 * preview stays shown while the next is asked.
 */
export function useCronPreview(cron: string, zone: string, count = 5): PreviewState {
  const [state, setState] = useState<PreviewState>({ preview: null, error: null, checking: false });
  useEffect(() => {
    if (!cron.trim()) {
      setState({ preview: null, error: null, checking: false });
      return;
    }
    const ctl = new AbortController();
    setState((s) => ({ ...s, checking: true }));
    const timer = setTimeout(() => {
      api<CronPreview>(previewPath(cron, zone.trim(), count), { signal: ctl.signal })
        .then((preview) => setState({ preview, error: null, checking: false }))
        .catch((err) => {
          if (isAbort(err)) return;
          const own = (name: string) =>
            err instanceof ApiError && err.status === 400 ? err.errors?.[name]?.join(' ') : undefined;
          const onCron = own('cron');
          const onZone = own('time_zone');
          setState({
            preview: null,
            error: onCron
              ? { field: 'cron', text: onCron }
              : onZone
                ? { field: 'time_zone', text: onZone }
                : { field: 'other', text: errorText(err) },
            checking: false,
          });
        });
    }, 400);
    return () => {
      clearTimeout(timer);
      ctl.abort();
    };
  }, [cron, zone, count]);
  return state;
}

/**
 * The server's reading of each schedule's cron (one preview per distinct cron and zone),
 * for the list: `description(schedule)` is undefined until it is in.
 */
export function useCronDescriptions(schedules: readonly Schedule[]) {
  const [known, setKnown] = useState<Record<string, string>>({});
  const keys = [...new Set(schedules.map((s) => JSON.stringify([s.cron, s.time_zone])))].sort();
  const wanted = keys.filter((k) => !(k in known)).join('\n');
  useEffect(() => {
    if (!wanted) return;
    const ctl = new AbortController();
    for (const key of wanted.split('\n')) {
      const [cron, zone] = JSON.parse(key) as [string, string];
      api<CronPreview>(previewPath(cron, zone, 1), { signal: ctl.signal })
        .then((p) => setKnown((k) => ({ ...k, [key]: p.description })))
        .catch((err) => {
          if (!isAbort(err)) setKnown((k) => ({ ...k, [key]: '' }));
        });
    }
    return () => ctl.abort();
  }, [wanted]);
  return (s: Schedule): string | undefined => known[JSON.stringify([s.cron, s.time_zone])];
}
