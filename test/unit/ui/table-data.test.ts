import { describe, expect, it } from 'vitest';
import {
  asBuckets,
  asItems,
  asTotals,
  numberColumns,
  valueColumn,
} from '../../../ui/src/pages/dashboards/table-data.js';

// A Table's results (a query with pipes) as the widget charts read them.

const timechart = {
  columns: [
    { name: '_time', type: 'time' },
    { name: 'host', type: 'string' },
    { name: 'count', type: 'number' },
    { name: 'bytes', type: 'number' },
  ],
  rows: [
    [60, 'web-1', 2, 10],
    [60, 'web-2', 1, 5],
    [0, 'web-1', 0, 0],
    [0, 'web-2', 4, 7],
  ],
};

describe('Table results as charts', () => {
  it('a time column makes buckets in time order, a text column series, the value column chosen or the first number', () => {
    expect(asBuckets(timechart)).toEqual([
      { ts: 0, count: 4, series: { 'web-1': 0, 'web-2': 4 } },
      { ts: 60, count: 3, series: { 'web-1': 2, 'web-2': 1 } },
    ]);
    expect(asBuckets(timechart, 'bytes')?.map((b) => b.count)).toEqual([7, 15]);
    expect(
      asBuckets({
        columns: [
          { name: 'host', type: 'string' },
          { name: 'n', type: 'number' },
        ],
        rows: [],
      }),
    ).toBeNull();
  });

  it('categories join the text columns; a number widget shows the first row, the value first', () => {
    const stats = {
      columns: [
        { name: 'host', type: 'string' },
        { name: 'status', type: 'number' },
        { name: 'n', type: 'number' },
      ],
      rows: [
        ['web-1', 200, 5],
        [null, 500, 1],
      ],
    };
    expect(numberColumns(stats)).toEqual(['status', 'n']);
    expect(valueColumn(stats, 'n')).toBe(2);
    expect(valueColumn(stats, 'host')).toBe(1);
    expect(asItems(stats, 'n')).toEqual([
      { value: 'web-1', count: 5 },
      { value: '(none)', count: 1 },
    ]);
    expect(asTotals(stats, 'n')).toEqual({ n: 5, status: 200 });
    expect(asTotals({ columns: stats.columns, rows: [] })).toEqual({});
  });
});
