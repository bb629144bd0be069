import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JournalExportParser, JournalFormatError } from '../../../../src/ingest/protocols/journald.js';
import { journalExport } from '../../../helpers/journal.js';

const parseIn = (body: Buffer, cuts: number[], maxEntryBytes = 1 << 20) => {
  const parser = new JournalExportParser({ maxEntryBytes });
  const out = [];
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    out.push(...parser.push(body.subarray(from, cut)));
    from = cut;
  }
  out.push(...parser.push(body.subarray(from)), ...parser.end());
  return out.map((e) => ({ ...e.record }));
};

/** Control characters other than tab and newline: what makes a journal value binary. */
const hasControl = (s: string) => [...s].some((c) => (c < ' ' && c !== '\t' && c !== '\n') || c === '\u007f');

const fieldName = fc.stringMatching(/^[A-Z_][A-Z0-9_]{0,20}$/);
const value = fc.oneof(
  fc.string({ maxLength: 40 }).filter((s) => !hasControl(s)),
  fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)),
);

describe('journal export format', () => {
  it('gives the same entries however the body is cut into chunks', () => {
    fc.assert(
      fc.property(
        fc.array(fc.dictionary(fieldName, value, { minKeys: 1, maxKeys: 6 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (entries, rawCuts) => {
          const body = journalExport(entries);
          const whole = parseIn(body, []);
          const cuts = rawCuts.map((c) => c % (body.length + 1));
          expect(parseIn(body, cuts)).toEqual(whole);
          expect(whole).toHaveLength(entries.length);
          // Text stays text (newlines too); other bytes become their list, as journalctl -o json.
          entries.forEach((entry, i) => {
            for (const [name, v] of Object.entries(entry)) {
              const printable = typeof v === 'string' || !hasControl(v.toString('latin1'));
              const text = typeof v === 'string' ? v : v.toString('utf8');
              const validUtf8 = typeof v === 'string' || Buffer.from(text).equals(v);
              expect(whole[i]![name]).toEqual(printable && validUtf8 ? text : [...(v as Buffer)]);
            }
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps a field repeated in an entry as the list of its values', () => {
    const body = Buffer.from('MESSAGE=x\nTAG=a\nTAG=b\nTAG=c\n\n');
    expect(parseIn(body, [])).toEqual([{ MESSAGE: 'x', TAG: ['a', 'b', 'c'] }]);
  });

  const malformed: Array<[string, Buffer, RegExp]> = [
    [
      'a text line that is not a field',
      Buffer.from('MESSAGE=ok\n\nhello world\n\n'),
      /Entry 2 .*not a journal field name/,
    ],
    [
      'a length prefix past the end',
      Buffer.concat([
        Buffer.from('MESSAGE\n'),
        Buffer.from([100, 0, 0, 0, 0, 0, 0, 0]),
        Buffer.from('short\n\n'),
      ]),
      /runs past the end/,
    ],
    [
      'binary data not followed by a newline',
      Buffer.concat([
        Buffer.from('MESSAGE\n'),
        Buffer.from([2, 0, 0, 0, 0, 0, 0, 0]),
        Buffer.from('abc\n\n'),
      ]),
      /not followed by a newline/,
    ],
    ['a body ending inside a field', Buffer.from('MESSAGE=ok\nPRIORITY=3'), /ends inside a field/],
    ['a lower-case name', Buffer.from('message=ok\n\n'), /not a journal field name/],
  ];
  for (const [what, body, error] of malformed) {
    it(`refuses ${what}, naming the entry and byte`, () => {
      expect(() => parseIn(body, [])).toThrow(error);
      expect(() => parseIn(body, [])).toThrow(JournalFormatError);
    });
  }

  it('refuses a 1 GiB field from its length prefix, without waiting for its bytes', () => {
    const length = Buffer.alloc(8);
    length.writeBigUInt64LE(1n << 30n);
    const parser = new JournalExportParser({ maxEntryBytes: 1 << 20 });
    expect(() => parser.push(Buffer.concat([Buffer.from('MESSAGE\n'), length, Buffer.alloc(100)]))).toThrow(
      /1073741824 bytes, more than 1048576/,
    );
  });

  it('refuses an entry over the cap made of many small fields, and a line that never ends', () => {
    const many = Buffer.from(`${'F=0123456789\n'.repeat(200)}\n`);
    expect(() => parseIn(many, [], 1000)).toThrow(/larger than 1000 bytes/);
    const parser = new JournalExportParser({ maxEntryBytes: 1000 });
    expect(() => {
      for (let i = 0; i < 100; i++)
        parser.push(Buffer.from('MESSAGE=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'));
    }).toThrow(/larger than 1000 bytes/);
  });
});
