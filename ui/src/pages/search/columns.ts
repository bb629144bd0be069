/** The results table's columns: the built-in ones and any event field, kept in localStorage. */

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
    return parseColumns(window.localStorage.getItem(COLUMNS_KEY));
  } catch {
    return [...DEFAULT_COLUMNS];
  }
}

export function saveColumns(cols: readonly string[]): void {
  try {
    window.localStorage.setItem(COLUMNS_KEY, JSON.stringify(cols));
  } catch {
    // Storage may be unavailable: the choice lasts until reload.
  }
}

/**
 * Shows or hides a column. Built-in columns keep their order, ahead of the fields, which
 * keep the order they were chosen in; the last column cannot be hidden.
 */
export function toggleColumn(cols: readonly string[], name: string, on: boolean): string[] {
  if (!on) {
    const next = cols.filter((c) => c !== name);
    return next.length > 0 ? next : [...cols];
  }
  if (cols.includes(name)) return [...cols];
  const next = [...cols, name];
  const builtins = BUILTIN_COLUMNS.filter((c) => next.includes(c));
  return [...builtins, ...next.filter((c) => !isBuiltin(c))];
}

/** An event's value as cell text. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
