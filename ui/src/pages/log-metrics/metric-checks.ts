/**
 * What the metric form can tell before asking the server (docs/api/log-metrics.md, the
 * definition's table): each wrong field with why, so "Save" waits until there is none. The
 * query, the field and the labels are the server's to judge: the form's Preview runs them and
 * shows its 400 at the field.
 */
export interface MetricFormValues {
  name: string;
  kind: string;
  field: string;
  quantiles: string;
  labels: string;
  resolution: string;
  retention: string;
  maxSeries: string;
}

export type CheckedField =
  | 'name'
  | 'field'
  | 'quantiles'
  | 'labels'
  | 'resolution_seconds'
  | 'retention_days'
  | 'max_series';

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const whole = (text: string): number | null => (/^\s*\d+\s*$/.test(text) ? Number(text) : null);

/** The fields wrong as typed, each with why (in the form's order). */
export function metricFormProblems(v: MetricFormValues): Array<[CheckedField, string]> {
  const out: Array<[CheckedField, string]> = [];
  if (!v.name.trim()) out.push(['name', 'A name is needed.']);
  if (v.kind !== 'count' && !v.field.trim())
    out.push(['field', `A ${v.kind} metric needs the numeric field it aggregates.`]);
  if (v.kind === 'quantiles') {
    const q = list(v.quantiles).map(Number);
    if (q.length < 1 || q.length > 10) out.push(['quantiles', 'From 1 to 10 quantiles.']);
    else if (q.some((x) => !(x > 0 && x < 1))) out.push(['quantiles', 'Each strictly between 0 and 1.']);
    else if (new Set(q).size !== q.length) out.push(['quantiles', 'Each at most once.']);
  }
  if (list(v.labels).length > 5) out.push(['labels', 'At most 5 labels.']);
  const resolution = whole(v.resolution);
  if (resolution === null || resolution < 10 || resolution > 3600 || 3600 % resolution !== 0)
    out.push([
      'resolution_seconds',
      'Whole seconds from 10 to 3600 that divide 3600 (10, 15, 20, 30, 60, 300, 900, 3600, ...).',
    ]);
  const retention = whole(v.retention);
  if (retention === null || retention < 1 || retention > 3650)
    out.push(['retention_days', 'Whole days from 1 to 3650.']);
  const maxSeries = whole(v.maxSeries);
  if (maxSeries === null || maxSeries < 1) out.push(['max_series', 'A whole number of at least 1.']);
  return out;
}
