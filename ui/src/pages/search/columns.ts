/**
 * The results table's columns: the built-in ones and any event field, their order and the
 * widths the reader gave them, kept in localStorage (and in the page's address).
 */

/** What is used of the browser's localStorage (unit tests typecheck this without the DOM). */
interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}
const storage = () => (globalThis as unknown as { localStorage: KeyValueStore }).localStorage;

export const BUILTIN_COLUMNS = ['time', 'severity', 'host', 'app', 'message'] as const;
export const DEFAULT_COLUMNS: readonly string[] = BUILTIN_COLUMNS;
export const COLUMNS_KEY = 'logscope.columns';

const LABELS: Record<string, string> = {
  time: 'Time',
  severity: 'Severity',
  host: 'Host',
  app: 'App',
  message: 'Message',
};

export const isBuiltin = (name: string) => (BUILTIN_COLUMNS as readonly string[]).includes(name);
export const columnLabel = (name: string) => LABELS[name] ?? name;

/** A column's CSS class (the built-in ones have their own widths). */
export const columnClass = (name: string) =>
  ({ time: 'c-time', severity: 'c-sev', host: 'c-host', app: 'c-app', message: 'c-msg' })[name] ?? 'c-field';

/** Reads a stored list: strings only, no repeats, at least one; anything else is the default. */
export function parseColumns(raw: string | null): string[] {
  try {
    const v: unknown = raw ? JSON.parse(raw) : null;
    if (Array.isArray(v)) {
      const cols = [...new Set(v.filter((c): c is string => typeof c === 'string' && c.length > 0))];
      if (cols.length > 0) return cols;
    }
  } catch {
    // fall through
  }
  return [...DEFAULT_COLUMNS];
}

export function loadColumns(): string[] {
  try {
    return parseColumns(storage().getItem(COLUMNS_KEY));
  } catch {
    return [...DEFAULT_COLUMNS];
  }
}

export function saveColumns(cols: readonly string[]): void {
  try {
    storage().setItem(COLUMNS_KEY, JSON.stringify(cols));
  } catch {
    // Storage may be unavailable: the choice lasts until reload.
  }
}

/**
 * Shows or hides a column; the last column cannot be hidden. A column shown goes before
 * the message (which stays last and takes the spare width), the time first, the message
 * last; the reader moves them from there (`moveColumn`, `placeColumn`).
 */
export function toggleColumn(cols: readonly string[], name: string, on: boolean): string[] {
  if (!on) {
    const next = cols.filter((c) => c !== name);
    return next.length > 0 ? next : [...cols];
  }
  if (cols.includes(name)) return [...cols];
  if (name === 'time') return [name, ...cols];
  const at = cols.indexOf('message');
  if (name === 'message' || at < 0) return [...cols, name];
  return [...cols.slice(0, at), name, ...cols.slice(at)];
}

/** The columns with `name` moved `by` places (-1: left), within the ends. */
export function moveColumn(cols: readonly string[], name: string, by: number): string[] {
  const from = cols.indexOf(name);
  if (from < 0) return [...cols];
  return placeColumn(cols, name, Math.max(0, Math.min(cols.length - 1, from + by)));
}

/** The columns with `name` at index `to` (of the list without it). */
export function placeColumn(cols: readonly string[], name: string, to: number): string[] {
  if (!cols.includes(name)) return [...cols];
  const rest = cols.filter((c) => c !== name);
  const at = Math.max(0, Math.min(rest.length, to));
  return [...rest.slice(0, at), name, ...rest.slice(at)];
}

/** Widths in px of the columns the reader resized; the others are sized to their content. */
export type ColumnWidths = Readonly<Record<string, number>>;
export const MIN_WIDTH = 48;
export const MAX_WIDTH = 1600;
export const WIDTHS_KEY = 'logscope.columnWidths';
const WIDTH_NAME = /^[\p{L}\p{N}_.@-]{1,256}$/u;

/** A width as kept: whole px within the bounds, or null when it is not a number. */
export const clampWidth = (px: unknown): number | null =>
  typeof px === 'number' && Number.isFinite(px)
    ? Math.round(Math.max(MIN_WIDTH, Math.min(MAX_WIDTH, px)))
    : null;

/** The widths of `[name, px]` pairs that are a column's name and a number; null when none. */
function cleanWidths(pairs: readonly (readonly [string, unknown])[]): ColumnWidths | null {
  const widths: Record<string, number> = {};
  for (const [name, px] of pairs.slice(0, 100)) {
    const width = clampWidth(px);
    if (WIDTH_NAME.test(name) && width !== null) widths[name] = width;
  }
  return Object.keys(widths).length > 0 ? widths : null;
}

/** The address's form of widths, `host:180,app:96` (absent: none resized). */
export function parseWidths(raw: string | null): ColumnWidths | null {
  if (!raw) return null;
  return cleanWidths(
    raw.split(',').map((part) => {
      const at = part.lastIndexOf(':');
      const px = part.slice(at + 1).trim();
      return [part.slice(0, Math.max(at, 0)).trim(), /^\d+$/.test(px) ? Number(px) : null] as const;
    }),
  );
}

export const widthsParam = (widths: ColumnWidths): string =>
  Object.entries(widths)
    .map(([name, px]) => `${name}:${px}`)
    .join(',');

/** The reader's own widths (kept in their browser, as their columns are). */
export function loadWidths(): ColumnWidths {
  try {
    const v: unknown = JSON.parse(storage().getItem(WIDTHS_KEY) ?? 'null');
    if (v && typeof v === 'object' && !Array.isArray(v)) return cleanWidths(Object.entries(v)) ?? {};
  } catch {
    // fall through
  }
  return {};
}

export function saveWidths(widths: ColumnWidths): void {
  try {
    storage().setItem(WIDTHS_KEY, JSON.stringify(widths));
  } catch {
    // Storage may be unavailable: the widths last until reload.
  }
}

/** An event's value as cell text. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
