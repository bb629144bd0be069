import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { insertRow, jsonEachRow } from '../../src/event-store/clickhouse/clickhouse-schema.js';
import { eventsArb } from '../helpers/filter-arbitraries.js';

describe('the ClickHouse insert body', () => {
  it('is JSON.stringify of each event as a row, line by line (property)', () => {
    const text = fc.string({ unit: 'binary', maxLength: 12 });
    fc.assert(
      fc.property(eventsArb, text, text, (events, a, b) => {
        const odd = events.map((e, i) => (i === 0 ? { ...e, message: a, fields: { [a]: b, 'x.y': b } } : e));
        const body = jsonEachRow(odd, 1_714_557_600_123);
        expect(body).toBe(odd.map((e) => `${JSON.stringify(insertRow(e, 1_714_557_600_123))}\n`).join(''));
      }),
      { numRuns: 300 },
    );
  });
});
