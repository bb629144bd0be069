/**
 * A Table query's results (a query with pipes) in the shapes the widget visualizations
 * draw: time series for line, area and bar charts over a time column, category values
 * for bars, pies and lists, the first row's numbers for a number. Pure, for tests.
 */

export interface TableColumn {
  name: string;
  type: string;
}

export interface TableData {
  columns: TableColumn[];
  rows: unknown[][];
}

export const isTableResults = (r: unknown): r is TableData =>
  typeof r === 'object' &&
  r !== null &&
  Array.isArray((r as TableData).columns) &&
  Array.isArray((r as TableData).rows);

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The column charted: `value` when it names a number column, else the first number column (not the time). */
export function valueColumn(t: TableData, value?: unknown): number {
  const named = t.columns.findIndex((c) => c.name === value && c.type === 'number');
  if (named >= 0) return named;
  return t.columns.findIndex((c) => c.type === 'number');
}

/** Columns that can be charted as values. */
export const numberColumns = (t: TableData) =>
  t.columns.filter((c) => c.type === 'number').map((c) => c.name);

/**
 * Results in the shape of a Timeline (`buckets`) when the table has a time column, with
 * a series per value of its first text column; otherwise null.
 */
export function asBuckets(
  t: TableData,
  value?: unknown,
): Array<{ ts: number; count: number; series?: Record<string, number> }> | null {
  const time = t.columns.findIndex((c) => c.type === 'time');
  const v = valueColumn(t, value);
  if (time < 0 || v < 0) return null;
  const series = t.columns.findIndex((c, i) => i !== time && (c.type === 'string' || c.type === 'ip'));
  const byTs = new Map<number, { ts: number; count: number; series?: Record<string, number> }>();
  for (const row of t.rows) {
    const ts = row[time];
    if (typeof ts !== 'number') continue;
    let b = byTs.get(ts);
    if (!b) {
      b = { ts, count: 0, ...(series >= 0 ? { series: {} } : {}) };
      byTs.set(ts, b);
    }
    const x = num(row[v]);
    b.count += x;
    if (b.series) {
      const name = String(row[series] ?? '(none)');
      b.series[name] = (b.series[name] ?? 0) + x;
    }
  }
  return [...byTs.values()].sort((a, b) => a.ts - b.ts);
}

/** Category and value per row: the text columns joined, the value column's number. */
export function asItems(t: TableData, value?: unknown): Array<{ value: string; count: number }> {
  const v = valueColumn(t, value);
  if (v < 0) return [];
  const labels = t.columns.flatMap((c, i) => (i !== v && c.type !== 'number' ? [i] : []));
  return t.rows.map((row) => ({
    value: labels.map((i) => String(row[i] ?? '(none)')).join(' · ') || t.columns[v]?.name || 'value',
    count: num(row[v]),
  }));
}

/** The first row's numbers, the value column first (a number widget). */
export function asTotals(t: TableData, value?: unknown): Record<string, number | null> {
  const row = t.rows[0];
  if (!row) return {};
  const v = valueColumn(t, value);
  const order = [v, ...t.columns.map((_, i) => i).filter((i) => i !== v)];
  return Object.fromEntries(
    order
      .filter((i) => i >= 0 && t.columns[i]?.type === 'number')
      .map((i) => [t.columns[i]?.name ?? '', (row[i] as number | null) ?? null]),
  );
}
