/**
 * The one audited function that writes a value into ClickHouse SQL text. Servers before
 * bound parameters (Debian's 18.16 among them) get every value through here; nothing else
 * in the ClickHouse store puts a value into SQL.
 *
 * - Strings: single-quoted; `\` and `'` backslash-escaped, control characters (C0 and
 *   DEL) as `\xHH`, everything else as its UTF-8 bytes. Nothing in the text can end the
 *   literal or start a comment.
 * - Numbers: finite only (NaN and ±Infinity are refused, not spelled `nan`/`inf`), in
 *   JavaScript's shortest round-trip form; negatives in parentheses, so that `x-` before
 *   them never reads as the `--` of a comment. Subnormal doubles (below 2.2e-308), which
 *   18.16's parser refuses and its `toFloat64` reads as 0, by their bits:
 *   `reinterpretAsFloat64(unhex('<8 bytes, little-endian>'))`.
 * - Bigints as decimal integers (negatives in parentheses), booleans as 1 and 0, null as
 *   NULL.
 */
export type ClickHouseScalar = string | number | bigint | boolean | null;

// biome-ignore lint/suspicious/noControlCharactersInRegex: escaping them is the point
const CONTROL = /[\u0000-\u001f\u007f]/g;

/** The smallest normal double: smaller ones are subnormal. */
const MIN_NORMAL = 2.2250738585072014e-308;

const hex = (c: string) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;

export function clickHouseLiteral(value: ClickHouseScalar): string {
  if (value === null) return 'NULL';
  switch (typeof value) {
    case 'string':
      return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'").replace(CONTROL, hex)}'`;
    case 'number': {
      if (!Number.isFinite(value)) throw new Error(`${value} has no ClickHouse literal here`);
      if (value !== 0 && Math.abs(value) < MIN_NORMAL) {
        const bytes = Buffer.alloc(8);
        bytes.writeDoubleLE(value);
        return `reinterpretAsFloat64(unhex('${bytes.toString('hex')}'))`;
      }
      const text = Object.is(value, -0) ? '0' : String(value);
      return value < 0 ? `(${text})` : text;
    }
    case 'bigint':
      return value < 0n ? `(${value})` : String(value);
    case 'boolean':
      return value ? '1' : '0';
    default:
      return value satisfies never;
  }
}
