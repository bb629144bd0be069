/** Formatting and time ranges shared by the pages. */
import { TIME_PRESETS } from '@shared/time-presets';

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
