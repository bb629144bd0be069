/**
 * The search page's histogram as pure functions: the bar width a chart of some pixels
 * shows, the server's buckets summed into those bars (aligned to the browser's zone, the
 * zone every time on the page is in), the time and count ticks, and the order and colour
 * names of severities.
 */
import { formatTs } from '../../format.js';
import { intervalSeconds } from './time-range.js';

/** A Timeline's results; with `split_by` each bucket counts its series (top values plus `other`). */
export interface TimelineData {
  interval: string;
  buckets: readonly { ts: number; count: number; series?: Record<string, number> }[];
}

/**
 * Timelines of the same window and interval split over disjoint sets of events, as one:
 * counts added, series side by side (`other` added). Null until every part is there, or
 * when their buckets differ.
 */
export function joinSplits(parts: readonly (TimelineData | null)[]): TimelineData | null {
  const [first, ...rest] = parts;
  if (
    !first ||
    rest.some((p) => !p || p.interval !== first.interval || p.buckets.length !== first.buckets.length)
  )
    return null;
  const buckets = first.buckets.map((b, i) => {
    const series: Record<string, number> = { ...b.series };
    let count = b.count;
    for (const p of rest as TimelineData[]) {
      const other = p.buckets[i];
      if (!other || other.ts !== b.ts) return null;
      count += other.count;
      for (const [k, v] of Object.entries(other.series ?? {})) series[k] = (series[k] ?? 0) + v;
    }
    return { ts: b.ts, count, series };
  });
  return buckets.every((b) => b !== null) ? { interval: first.interval, buckets } : null;
}

/** One bar: `[start, end)` in Unix seconds (cut to the window), its events and their split. */
export interface Bar {
  start: number;
  end: number;
  count: number;
  series: Record<string, number> | null;
}

const MIN = 60;
const HOUR = 3600;
const DAY = 86_400;

/** Bar widths to pick from, in seconds: each divides the next that the server may send. */
const BAR_STEPS = [
  ...[1, 2, 5, 10, 15, 30],
  ...[1, 2, 5, 10, 15, 30].map((m) => m * MIN),
  ...[1, 2, 3, 6, 12].map((h) => h * HOUR),
  ...[1, 2, 7, 14, 30, 91, 182, 365].map((d) => d * DAY),
];

/** Pixels a bar takes at least: bars number at most a quarter of the chart's width. */
export const MIN_BAR_PX = 4;

/** Seconds as an interval's name: 600 → `10m`, 7200 → `2h`. */
export function intervalName(seconds: number): string {
  if (seconds % DAY === 0) return `${seconds / DAY}d`;
  if (seconds % HOUR === 0) return `${seconds / HOUR}h`;
  if (seconds % MIN === 0) return `${seconds / MIN}m`;
  return `${seconds}s`;
}

/**
 * The bar width for a span drawn `widthPx` wide from buckets of `serverS`: the finest
 * step that is a whole number of the server's buckets and leaves each bar MIN_BAR_PX
 * (so between a quarter and, past the coarsest jumps, a tenth of the width in bars).
 */
export function barSeconds(spanS: number, widthPx: number, serverS: number): number {
  const most = Math.max(1, Math.floor(widthPx / MIN_BAR_PX));
  const fits = BAR_STEPS.filter((s) => s >= serverS && s % serverS === 0);
  return fits.find((s) => spanS / s <= most) ?? fits[fits.length - 1] ?? serverS;
}

/** Seconds the browser's zone is ahead of UTC at `ts`. */
export const zoneOffset = (ts: number) => -new Date(ts * 1000).getTimezoneOffset() * MIN;

/**
 * The server's buckets summed into bars of `barS` seconds, cut to the window. Bars start
 * at the zone's wall-clock multiples (a day bar at local midnight) when the zone's offset
 * is a whole number of the server's buckets; otherwise at UTC's.
 */
export function rebucket(
  data: TimelineData,
  window: { ts_from: number; ts_to: number },
  barS: number,
): Bar[] {
  const serverS = intervalSeconds(data.interval) ?? barS;
  const offset = zoneOffset((window.ts_from + window.ts_to) / 2);
  const shift = offset % serverS === 0 ? offset : 0;
  const bars = new Map<number, Bar>();
  for (const b of data.buckets) {
    const start = Math.floor((b.ts + shift) / barS) * barS - shift;
    let bar = bars.get(start);
    if (!bar) {
      bar = { start, end: start + barS, count: 0, series: b.series ? {} : null };
      bars.set(start, bar);
    }
    bar.count += b.count;
    if (b.series && bar.series)
      for (const [k, v] of Object.entries(b.series)) bar.series[k] = (bar.series[k] ?? 0) + v;
  }
  return [...bars.values()]
    .map((b) => ({ ...b, start: Math.max(b.start, window.ts_from), end: Math.min(b.end, window.ts_to) }))
    .filter((b) => b.end > b.start)
    .sort((a, b) => a.start - b.start);
}

/** Steps between time labels, in seconds; past a day, whole days (then months, below). */
const TICK_STEPS = [...BAR_STEPS.filter((s) => s <= 2 * DAY), 3 * DAY, 7 * DAY, 14 * DAY];
const MONTH_STEPS = [1, 3, 6, 12];

/** Pixels between time labels at least (a label is 5 to 8 characters). */
export const TICK_PX = 90;

export interface Tick {
  ts: number;
  label: string;
  /** The first tick of a day (or of a year, with month steps): its label is the date. */
  major: boolean;
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * Time labels at round wall-clock times of the browser's zone, 24-hour, at least TICK_PX
 * apart over `widthPx`: `HH:mm` (`HH:mm:ss` under a minute), the date `MM-DD` at each
 * midnight and for steps of days, `YYYY-MM` for steps of months.
 */
export function timeTicks(from: number, to: number, widthPx: number): Tick[] {
  const span = to - from;
  if (!(span > 0) || widthPx <= 0) return [];
  const most = Math.max(1, Math.floor(widthPx / TICK_PX));
  const step = TICK_STEPS.find((s) => span / s <= most);
  const out: Tick[] = [];
  const push = (d: Date) => {
    const ts = d.getTime() / 1000;
    if (ts < from || ts >= to) return;
    const midnight = d.getHours() === 0 && d.getMinutes() === 0 && d.getSeconds() === 0;
    const date = `${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
    let label = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
    if (step === undefined) label = `${d.getFullYear()}-${pad(d.getMonth() + 1)}`;
    else if (step >= DAY || midnight) label = date;
    else if (step < MIN) label += `:${pad(d.getSeconds())}`;
    out.push({ ts, label, major: step === undefined ? d.getMonth() === 0 : midnight });
  };
  const d = new Date(from * 1000);
  if (step === undefined) {
    // Months: the first of a month, in steps that divide the year.
    const months =
      MONTH_STEPS.find((m) => span / (m * 30 * DAY) <= most) ?? 12 * Math.ceil(span / (365 * DAY) / most);
    d.setHours(0, 0, 0, 0);
    d.setDate(1);
    d.setMonth(Math.floor(d.getMonth() / Math.min(months, 12)) * Math.min(months, 12));
    for (; d.getTime() / 1000 < to; d.setMonth(d.getMonth() + months)) push(d);
  } else if (step < HOUR) {
    // The zone's offset is whole minutes, so under an hour the steps fall on its round times.
    const offset = zoneOffset(from);
    for (let t = Math.ceil((from + offset) / step) * step - offset; t < to; t += step)
      push(new Date(t * 1000));
  } else if (step < DAY) {
    const hours = step / HOUR;
    d.setMinutes(0, 0, 0);
    d.setHours(Math.floor(d.getHours() / hours) * hours);
    // Wall-clock hours (a day that changes to summer time has 23): the date object steps them.
    for (; d.getTime() / 1000 < to; d.setHours(d.getHours() + hours)) push(d);
  } else {
    const days = step / DAY;
    d.setHours(0, 0, 0, 0);
    // Weeks from a Monday.
    if (days % 7 === 0) d.setDate(d.getDate() - ((d.getDay() + 6) % 7));
    for (; d.getTime() / 1000 < to; d.setDate(d.getDate() + days)) push(d);
  }
  return out;
}

/** Round steps for a count axis (1, 2 or 5 times a power of ten), `count` of them to the top at most; the dashboards' time charts use it too. */
export function countTicks(max: number, count = 2): number[] {
  const raw = Math.max(1, max) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const n = raw / mag;
  const step = Math.max(1, (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * mag);
  const top = Math.ceil(Math.max(1, max) / step) * step;
  const out: number[] = [];
  // Half a step over the top: sums of fractional steps fall short of it.
  for (let v = 0; v <= top + step / 2; v += step) out.push(v);
  return out;
}

/** 1200 → 1.2k, 3000000 → 3M: axis labels stay narrow. */
export function compact(n: number): string {
  const r = (v: number) => String(Math.round(v * 10) / 10);
  if (n >= 1e9) return `${r(n / 1e9)}G`;
  if (n >= 1e6) return `${r(n / 1e6)}M`;
  if (n >= 1e3) return `${r(n / 1e3)}k`;
  return r(n);
}

/** Syslog's order, most severe first (the rank `severity:>=warning` compares by): the stack's order from the axis up. */
const SEVERITY_ORDER = ['emergency', 'alert', 'critical', 'error', 'warning', 'notice', 'info', 'debug'];

/** Series in stacking order: severities most severe first, other values by name, `other` last. */
export function seriesOrder(names: Iterable<string>): string[] {
  const rank = (n: string) => {
    const i = SEVERITY_ORDER.indexOf(n);
    return i >= 0 ? i : n === 'other' ? SEVERITY_ORDER.length + 1 : SEVERITY_ORDER.length;
  };
  return [...new Set(names)].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** The colour a series is drawn in (timeline.css): the three worst severities share one. */
export function seriesColor(name: string): string {
  if (name === 'emergency' || name === 'alert' || name === 'critical') return 'critical';
  return SEVERITY_ORDER.includes(name) ? name : 'other';
}

/** A bar's time span: `YYYY-MM-DD HH:mm – HH:mm`, seconds shown when a bound has them, the date again past midnight. */
export function barSpan(bar: Pick<Bar, 'start' | 'end'>): string {
  const seconds = bar.start % MIN !== 0 || bar.end % MIN !== 0;
  const a = formatTs(bar.start).slice(0, seconds ? 19 : 16);
  const b = formatTs(bar.end).slice(0, seconds ? 19 : 16);
  return `${a} – ${a.slice(0, 10) === b.slice(0, 10) ? b.slice(11) : b}`;
}
