/** Formatting and time ranges shared by the pages. */

const numberFormat = new Intl.NumberFormat('en-US');
export const formatCount = (n: number) => numberFormat.format(n);

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Unix seconds (ms precision) as local `YYYY-MM-DD HH:MM:SS.mmm`. */
export function formatTs(seconds: unknown): string {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '';
  const d = new Date(Math.round(seconds * 1000));
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`
  );
}

/** An ISO date-time from the API as local `YYYY-MM-DD HH:MM`. */
export function formatIso(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export const TIME_PRESETS = [
  { value: 'last_5_minutes', label: 'Last 5 minutes', ms: 5 * 60_000 },
  { value: 'last_15_minutes', label: 'Last 15 minutes', ms: 15 * 60_000 },
  { value: 'last_hour', label: 'Last hour', ms: 3_600_000 },
  { value: 'last_4_hours', label: 'Last 4 hours', ms: 4 * 3_600_000 },
  { value: 'last_24_hours', label: 'Last 24 hours', ms: 86_400_000 },
  { value: 'last_7_days', label: 'Last 7 days', ms: 7 * 86_400_000 },
  { value: 'last_30_days', label: 'Last 30 days', ms: 30 * 86_400_000 },
  { value: 'today', label: 'Today (UTC)', ms: 0 },
  { value: 'yesterday', label: 'Yesterday (UTC)', ms: 0 },
] as const;

export const DEFAULT_PRESET = 'last_hour';

export const isPreset = (v: string | null): v is string => TIME_PRESETS.some((p) => p.value === v);

/**
 * A preset pinned to absolute Unix seconds `[ts_from, ts_to)` at `nowMs`, as the server
 * resolves it. Pinning keeps the rows still while the user scrolls (a relative range is
 * re-evaluated on every read) and gives the timeline exactly the search's window.
 */
export function pinPreset(preset: string, nowMs: number): { ts_from: number; ts_to: number } {
  const to = Math.floor(nowMs / 1000) + 1;
  const day = 86_400;
  const startOfDay = Math.floor(nowMs / 1000 / day) * day;
  if (preset === 'today') return { ts_from: startOfDay, ts_to: to };
  if (preset === 'yesterday') return { ts_from: startOfDay - day, ts_to: startOfDay };
  const p = TIME_PRESETS.find((x) => x.value === preset);
  const span = Math.round((p?.ms ?? 3_600_000) / 1000);
  return { ts_from: to - span, ts_to: to };
}
