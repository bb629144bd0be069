import type { Identity } from '../../core/identity.js';
import { AppError, fieldError } from '../../errors/errors.js';
import type { TimeWindow } from '../../event-store/query-plan.js';
import type { ReadScope } from '../../event-store/read-scope.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import type { MetricAnswers, MetricParams } from '../../query/types/metric.js';
import type { LogMetric } from './log-metric-schema.js';
import {
  type LogMetricSeries,
  type ParamNames,
  type SeriesRead,
  seriesRead,
  stepParam,
} from './log-metric-series.js';
import type { LogMetricsService } from './log-metrics-service.js';

/** A Metric query's parameters as its errors name them. */
const NAMES: ParamNames = {
  from: 'params.time_range',
  step: 'params.step',
  labels: 'params.labels',
  label: (field) => `params.label_filter.${field}`,
  limit: 'params.limit',
};

/**
 * The query type Metric (docs/api/log-metrics.md "The query type Metric"): a log metric's
 * series answer over the query's time range, read from its buckets in the query's scope
 * (the event store sums only the stream sets that scope reads), as the series route reads it.
 */
export class LogMetricQueries implements MetricAnswers {
  constructor(
    private readonly metrics: LogMetricsService,
    private readonly series: LogMetricSeries,
    private readonly scopes: ReadScopes,
    /** Who a query's owner is now (an active admin sees every metric). */
    private readonly owners: {
      owner(userId: number): Promise<Pick<Identity, 'userId' | 'isAdmin'> | undefined>;
    },
  ) {}

  async check(
    who: Pick<Identity, 'userId' | 'isAdmin'>,
    params: MetricParams,
    window: TimeWindow,
    widget = false,
  ): Promise<void> {
    const metric = await this.metrics.visibleTo(who, params.metric_id);
    // A deleted metric's widget begins, and its answer ends ERROR naming the metric.
    if (!metric && widget && !(await this.metrics.exists(params.metric_id))) return;
    if (!metric) throw fieldError('params.metric_id', 'No log metric you may see has this id.');
    readOf(metric, params, window);
  }

  /**
   * Every computation of a Metric query comes here, whatever began it (the query resource, a
   * widget, a report, an MCP tool): the metric must be one its owner may see now.
   */
  async answer(userId: number, scope: ReadScope, params: MetricParams, window: TimeWindow): Promise<unknown> {
    const owner = await this.owners.owner(userId);
    const metric = owner && (await this.metrics.visibleTo(owner, params.metric_id));
    if (!metric)
      throw new AppError(
        404,
        'not_found',
        `The log metric ${params.metric_id} this query reads was deleted, or its owner may no longer see it.`,
      );
    const only = await this.scopes.streamChoice(userId, params.streams, 'params.streams');
    return this.series.answer(metric, readOf(metric, params, window), scope, only, NAMES);
  }
}

/** The series read a Metric query's params ask of `metric` (a 400 on `params.<name>` otherwise). */
function readOf(metric: LogMetric, p: MetricParams, window: TimeWindow): SeriesRead {
  return seriesRead(
    metric,
    {
      fromMs: window.fromMs,
      toMs: window.toMs,
      stepMs:
        p.step === undefined
          ? undefined
          : typeof p.step === 'number'
            ? p.step * 1000
            : stepParam(p.step, NAMES.step),
      labels: p.labels,
      labelFilter: new Map(Object.entries(p.label_filter ?? {})),
      limit: p.limit,
    },
    NAMES,
  );
}
