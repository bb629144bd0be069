/**
 * Widget visualizations drawn without a chart library: a widget's query result
 * (GenericQuery of Search, TopN, LastN, Timeline, Summary, Patterns, Table or Metric) shown as its
 * kind says, each kind drawn by a file of this folder.
 */

import { answerOf } from '@shared/metric-figures';
import type { ReactNode } from 'react';
import { isPatternsResults, PatternsTable } from '../../../components/Patterns';
import type { Drill } from '../dashboard-address';
import { isTableResults } from '../table-data';
import { Bars } from './bar';
import { fromTable, points, type QueryData, table } from './data';
import { List } from './list';
import { MapChart } from './map';
import { MetricVisualization } from './metric';
import { BigNumber } from './number';
import { Pie } from './pie';
import { DataTable } from './table';
import { TimeChart } from './time';

export type { QueryData } from './data';

export type VisualizationKind = 'table' | 'bar' | 'line' | 'area' | 'pie' | 'number' | 'map' | 'list';

interface ChartProps {
  data: QueryData;
  options: Record<string, unknown>;
  title: string;
  /** A Search's projection (its columns). */
  fields?: unknown;
  /** The field a TopN or LastN counts the values of. */
  field?: string | undefined;
  /** Where a value or a time bucket leads (Search); none: values are not links. */
  drill?: Drill | undefined;
}

type Chart = (props: ChartProps) => ReactNode;

const tableChart: Chart = ({ data, title, fields, field, drill }) => (
  <DataTable t={table(data, fields, field)} caption={title} drill={drill} />
);

/** A Patterns widget as a list or table: its templates as the search page's Patterns tab shows them. */
const orPatterns =
  (chart: Chart): Chart =>
  (props) =>
    isPatternsResults(props.data.results) ? (
      <PatternsTable results={props.data.results} caption={props.title} compact />
    ) : (
      chart(props)
    );

/** Bar, line and area draw a result over time as a chart over time; bars draw categories too. */
const overTime =
  (kind: 'bar' | 'line' | 'area'): Chart =>
  ({ data, options, title, field, drill }) =>
    Array.isArray(data.results?.buckets) ? (
      <TimeChart data={data} kind={kind} stacked={options.stacked === true} title={title} drill={drill} />
    ) : (
      <Bars pts={points(data, field)} title={title} drill={drill} />
    );

/** How each kind is drawn: a new kind is an entry here and a file beside this one. */
const CHARTS: Record<VisualizationKind, Chart> = {
  table: orPatterns(tableChart),
  list: orPatterns(({ data, field, drill }) => <List data={data} field={field} drill={drill} />),
  number: ({ data }) => <BigNumber data={data} />,
  pie: ({ data, title, field, drill }) => <Pie pts={points(data, field)} title={title} drill={drill} />,
  bar: overTime('bar'),
  line: overTime('line'),
  area: overTime('area'),
  map: ({ data, title, fields }) => <MapChart data={data} title={title} fields={fields} />,
};

const isKind = (kind: string): kind is VisualizationKind => Object.hasOwn(CHARTS, kind);

/**
 * A widget's content by its visualization kind (a kind this UI does not know: a table).
 * A Table's results (a query with pipes) have no field values to search for: only their
 * time buckets lead to Search.
 */
export function Visualization(
  props: Omit<ChartProps, 'options'> & { kind: VisualizationKind | string; options: Record<string, unknown> },
): ReactNode {
  const { kind, options, title, fields, drill } = props;
  const metric = answerOf(props.data.results);
  if (metric) return <MetricVisualization kind={kind} answer={metric} y={options.y} title={title} />;
  const piped = isTableResults(props.data.results);
  const data = fromTable(props.data, kind, options.value);
  const chart = isKind(kind) ? CHARTS[kind] : tableChart;
  return chart({ data, options, title, fields, drill, field: piped ? undefined : props.field });
}
