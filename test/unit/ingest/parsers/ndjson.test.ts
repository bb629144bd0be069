import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../../../src/errors/errors.js';
import {
  decodeUtf8Body,
  findInvalidUtf8,
  IngestBodyError,
  isValidUtf8,
  parseJsonBody,
  parseNdjson,
} from '../../../../src/ingest/parsers/ndjson.js';

describe('parseNdjson', () => {
  it('gives one entry per non-blank line, with record index and line number', () => {
    const text = '{"a":1}\n\n   \n{"b":2}\n[3]\n"str"\n';
    expect(parseNdjson(text)).toEqual([
      { index: 0, line: 1, value: { a: 1 } },
      { index: 1, line: 4, value: { b: 2 } },
      { index: 2, line: 5, value: [3] },
      { index: 3, line: 6, value: 'str' },
    ]);
  });

  it('turns a bad line into an error entry naming the line, and keeps going', () => {
    const entries = parseNdjson('{"ok":1}\n{"broken":\n{"ok":2}');
    expect(entries).toHaveLength(3);
    expect(entries[0]).toEqual({ index: 0, line: 1, value: { ok: 1 } });
    expect(entries[1]!.index).toBe(1);
    expect(entries[1]!.value).toBeUndefined();
    expect(entries[1]!.error).toMatch(/^line 2: invalid JSON \(.+\)$/);
    expect(entries[2]).toEqual({ index: 2, line: 3, value: { ok: 2 } });
  });

  it('accepts CRLF line ends, a missing last newline and a leading BOM', () => {
    expect(parseNdjson('\uFEFF{"a":1}\r\n{"b":2}')).toEqual([
      { index: 0, line: 1, value: { a: 1 } },
      { index: 1, line: 2, value: { b: 2 } },
    ]);
  });

  it('gives nothing for an empty or blank body', () => {
    expect(parseNdjson('')).toEqual([]);
    expect(parseNdjson('\n \r\n\t\n')).toEqual([]);
  });

  it('does not split on a newline escaped inside a string', () => {
    expect(parseNdjson('{"m":"a\\nb"}')).toEqual([{ index: 0, line: 1, value: { m: 'a\nb' } }]);
  });

  it('treats a pretty-printed object as broken lines (NDJSON is one record per line)', () => {
    const entries = parseNdjson('{\n"a": 1\n}');
    expect(entries.map((e) => e.error !== undefined)).toEqual([true, true, true]);
  });

  it('round-trips any list of JSON values', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue()), (values) => {
        const text = values.map((v) => JSON.stringify(v)).join('\n');
        const parsed = parseNdjson(text).map((e) => e.value);
        expect(parsed).toEqual(values.map((v) => JSON.parse(JSON.stringify(v))));
      }),
      { numRuns: 100 },
    );
  });
});

describe('parseJsonBody', () => {
  it('gives one entry per array element', () => {
    expect(parseJsonBody('[{"a":1}, 2, null]')).toEqual([
      { index: 0, value: { a: 1 } },
      { index: 1, value: 2 },
      { index: 2, value: null },
    ]);
  });

  it('gives one entry for an object', () => {
    expect(parseJsonBody(' {"a":{"b":[1]}} ')).toEqual([{ index: 0, value: { a: { b: [1] } } }]);
  });

  it('gives one entry for any other JSON value, for normalisation to reject', () => {
    expect(parseJsonBody('"text"')).toEqual([{ index: 0, value: 'text' }]);
  });

  it('gives nothing for an empty array', () => {
    expect(parseJsonBody('[]')).toEqual([]);
  });

  it('accepts a BOM', () => {
    expect(parseJsonBody('\uFEFF{"a":1}')).toEqual([{ index: 0, value: { a: 1 } }]);
  });

  it.each([
    ['invalid JSON', '{"a":', /^Request body is not valid JSON: /],
    ['two objects', '{"a":1}\n{"b":2}', /^Request body is not valid JSON: /],
    ['an empty body', '', /^Request body is empty\.$/],
    ['a blank body', '  \n', /^Request body is empty\.$/],
  ])('throws a typed 400 error for %s', (_label, text, message) => {
    let caught: unknown;
    try {
      parseJsonBody(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(IngestBodyError);
    expect(caught).toBeInstanceOf(AppError);
    const error = caught as IngestBodyError;
    expect(error.status).toBe(400);
    expect(error.code).toBe('parse_error');
    expect(error.message).toMatch(message);
  });
});

describe('UTF-8 checks', () => {
  const bytes = (...values: number[]) => Uint8Array.from(values);

  it('decodes valid UTF-8 and drops a BOM', () => {
    expect(decodeUtf8Body(Buffer.from('\uFEFFhé€😀', 'utf8'))).toBe('hé€😀');
    expect(decodeUtf8Body(new Uint8Array())).toBe('');
  });

  it.each([
    ['a lone continuation byte', bytes(0x61, 0x80), 1],
    ['a truncated 2-byte sequence', bytes(0x61, 0x62, 0xc3), 2],
    ['a truncated 3-byte sequence', bytes(0xe2, 0x82), 0],
    ['an overlong 2-byte encoding', bytes(0xc0, 0xaf), 0],
    ['an overlong 3-byte encoding', bytes(0xe0, 0x80, 0xaf), 0],
    ['an overlong 4-byte encoding', bytes(0xf0, 0x80, 0x80, 0xaf), 0],
    ['a UTF-16 surrogate', bytes(0x41, 0xed, 0xa0, 0x80), 1],
    ['a code point above U+10FFFF', bytes(0xf4, 0x90, 0x80, 0x80), 0],
    ['an 0xFF byte', bytes(0x7b, 0x7d, 0xff), 2],
    ['Latin-1 text', Buffer.from('{"m":"caf\u00e9"}', 'latin1'), 9],
  ])('rejects %s, naming the offset', (_label, input, offset) => {
    expect(findInvalidUtf8(input)).toBe(offset);
    expect(isValidUtf8(input)).toBe(false);
    let caught: unknown;
    try {
      decodeUtf8Body(input);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(IngestBodyError);
    expect((caught as IngestBodyError).code).toBe('invalid_encoding');
    expect((caught as IngestBodyError).message).toBe(
      `Request body is not valid UTF-8 (first invalid byte at offset ${offset}).`,
    );
  });

  it.each([
    ['ASCII', bytes(0x41)],
    ['U+0080', bytes(0xc2, 0x80)],
    ['U+07FF', bytes(0xdf, 0xbf)],
    ['U+0800', bytes(0xe0, 0xa0, 0x80)],
    ['U+D7FF', bytes(0xed, 0x9f, 0xbf)],
    ['U+E000', bytes(0xee, 0x80, 0x80)],
    ['U+FFFF', bytes(0xef, 0xbf, 0xbf)],
    ['U+10000', bytes(0xf0, 0x90, 0x80, 0x80)],
    ['U+10FFFF', bytes(0xf4, 0x8f, 0xbf, 0xbf)],
  ])('accepts the boundary %s', (_label, input) => {
    expect(findInvalidUtf8(input)).toBe(-1);
    expect(isValidUtf8(input)).toBe(true);
  });

  it('agrees with the platform decoder on random bytes', () => {
    const fatal = new TextDecoder('utf-8', { fatal: true });
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 32 }), (input) => {
        let valid = true;
        try {
          fatal.decode(input);
        } catch {
          valid = false;
        }
        expect(isValidUtf8(input)).toBe(valid);
      }),
      { numRuns: 2000 },
    );
  });
});
