/**
 * Widgets of the query type Metric (docs/api/log-metrics.md "The query type Metric"): drawn as a line,
 * area or bar chart over the points, a number or a table of the series;
 * `visualization.options.y` picks the figure of each point and total.
 */

import { type FieldErrors, validationError } from '../../errors/errors.js';
import { isMetricFigure, METRIC_FIGURES } from '../../shared/metric-figures.js';

export const METRIC_VISUALIZATIONS: readonly string[] = ['line', 'area', 'bar', 'number', 'table'];

/**
 * A Metric widget's visualization fits its query: one of the kinds a series answer is
 * drawn as, and a figure `y` the answer carries (a 400 naming the field under `path`).
 * Widgets of other types pass.
 */
export function checkVisualization(
  query: { type: string },
  visualization: { kind: string; options: Record<string, unknown> },
  path: string,
): void {
  if (query.type !== 'Metric') return;
  const at = (field: string) => (path ? `${path}.${field}` : field);
  const errors: FieldErrors = {};
  if (!METRIC_VISUALIZATIONS.includes(visualization.kind))
    errors[at('visualization.kind')] = [
      `A Metric widget is drawn as one of: ${METRIC_VISUALIZATIONS.join(', ')}.`,
    ];
  const y = visualization.options.y;
  if (y !== undefined && !isMetricFigure(y))
    errors[at('visualization.options.y')] = [
      `One of ${METRIC_FIGURES.join(', ')} or a quantile's key ("0.99").`,
    ];
  const fields = Object.keys(errors);
  if (fields.length) throw validationError(errors, `${fields.join(', ')}: ${Object.values(errors)[0]![0]}`);
}
