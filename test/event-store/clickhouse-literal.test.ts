import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clickHouseLiteral } from '../../src/event-store/clickhouse/clickhouse-literal.js';
import { clickHouseHttp, clickHouseTest } from '../helpers/clickhouse.js';

describe('clickHouseLiteral, without a server', () => {
  it('quotes and escapes text so nothing in it ends the literal', () => {
    expect(clickHouseLiteral("it's")).toBe("'it\\'s'");
    expect(clickHouseLiteral('a\\b')).toBe("'a\\\\b'");
    expect(clickHouseLiteral('\\')).toBe("'\\\\'");
    expect(clickHouseLiteral('line\nnext\u0000\u007f')).toBe("'line\\x0anext\\x00\\x7f'");
    expect(clickHouseLiteral('été ✓ 𝄞')).toBe("'été ✓ 𝄞'");
  });

  it('writes numbers so no neighbour can make a comment of them, and refuses what has no literal', () => {
    expect(clickHouseLiteral(5)).toBe('5');
    expect(clickHouseLiteral(-5)).toBe('(-5)');
    expect(`x-${clickHouseLiteral(-5)}`).not.toContain('--');
    expect(clickHouseLiteral(-0)).toBe('0');
    expect(clickHouseLiteral(1e-7)).toBe('1e-7');
    expect(clickHouseLiteral(-(2n ** 63n))).toBe('(-9223372036854775808)');
    expect(clickHouseLiteral(true)).toBe('1');
    expect(clickHouseLiteral(null)).toBe('NULL');
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(() => clickHouseLiteral(bad)).toThrow();
    }
  });
});

describe.skipIf(!clickHouseTest.run)('clickHouseLiteral on a ClickHouse server', () => {
  const select = async (sql: string): Promise<unknown> => {
    const rows = (await clickHouseHttp(`SELECT ${sql} AS v FORMAT JSONEachRow`)) as Array<{ v: unknown }>;
    return rows[0]?.v;
  };

  it('reads back every string as it was (property, with quotes, backslashes, controls and injections)', async () => {
    const tricky = fc.constantFrom(
      "'",
      '\\',
      "\\'",
      "''",
      '--',
      '/*',
      '*/',
      ';',
      "'); DROP TABLE t; --",
      '\u0000',
      '\n',
      '?',
      '{x:String}',
    );
    const text = fc
      .array(fc.oneof(tricky, fc.string({ unit: 'binary', maxLength: 8 })), { maxLength: 6 })
      .map((a) => a.join(''));
    const samples = fc.sample(text, { numRuns: 300, seed: 7 });
    // One statement for all: each sample a column of its own.
    const sql = `SELECT ${samples.map((s, i) => `${clickHouseLiteral(s)} AS c${i}`).join(', ')} FORMAT JSONEachRow`;
    const [row] = (await clickHouseHttp(sql)) as Array<Record<string, string>>;
    expect(samples.map((_, i) => row?.[`c${i}`])).toEqual(samples);
  });

  it('reads back numbers, bigints and booleans as they were', async () => {
    const numbers = [
      0,
      -0,
      1,
      -1,
      0.1,
      -2.5e-300,
      1.7976931348623157e308,
      2 ** 53,
      -(2 ** 53),
      1e21,
      123456.789,
      5e-324,
      -5e-324,
      2.225073858507201e-308,
      2.2250738585072014e-308,
    ];
    for (const n of numbers)
      expect(Number(await select(`toFloat64(${clickHouseLiteral(n)})`))).toBe(n === 0 ? 0 : n);
    expect(String(await select(`toString(${clickHouseLiteral(-(2n ** 63n))})`))).toBe('-9223372036854775808');
    expect(String(await select(`toString(${clickHouseLiteral(2n ** 64n - 1n)})`))).toBe(
      '18446744073709551615',
    );
    expect(Number(await select(`${clickHouseLiteral(true)} + ${clickHouseLiteral(false)}`))).toBe(1);
    expect(await select(`isNull(${clickHouseLiteral(null)})`)).toBe(1);
    // x minus a negative literal stays arithmetic.
    expect(Number(await select(`3-${clickHouseLiteral(-2)}`))).toBe(5);
  });
});
