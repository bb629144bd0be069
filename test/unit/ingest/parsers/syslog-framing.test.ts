import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_SYSLOG_MESSAGE_BYTES,
  type SyslogFrame,
  SyslogFrameSplitter,
} from '../../../../src/ingest/parsers/syslog.js';

const enc = (text: string) => Buffer.from(text, 'utf8');
const octet = (message: string) => `${Buffer.byteLength(message)} ${message}`;

function split(chunks: (string | Uint8Array)[], max?: number): SyslogFrame[] {
  const splitter = new SyslogFrameSplitter(max);
  const frames = chunks.flatMap((c) => splitter.push(typeof c === 'string' ? enc(c) : c));
  return [...frames, ...splitter.end()];
}

const texts = (frames: SyslogFrame[]) => frames.map((f) => f.text);

/** Every way of delivering the stream one byte at a time must give the same frames. */
function bytewise(stream: string, max?: number): SyslogFrame[] {
  const bytes = enc(stream);
  return split(
    Array.from(bytes, (b) => Uint8Array.of(b)),
    max,
  );
}

describe('SyslogFrameSplitter: newline framing', () => {
  it('splits on LF, CRLF and NUL', () => {
    const frames = split(['<13>a\n<13>b\r\n<13>c\0<13>d\n']);
    expect(texts(frames)).toEqual(['<13>a', '<13>b', '<13>c', '<13>d']);
    expect(frames.every((f) => f.framing === 'non-transparent' && !f.truncated)).toBe(true);
  });

  it('waits for the terminator across chunks', () => {
    const splitter = new SyslogFrameSplitter();
    expect(splitter.push(enc('<13>hel'))).toEqual([]);
    expect(splitter.push(enc('lo'))).toEqual([]);
    expect(texts(splitter.push(enc(' world\n<13>next')))).toEqual(['<13>hello world']);
    expect(texts(splitter.end())).toEqual(['<13>next']);
    expect(splitter.end()).toEqual([]);
  });

  it('gives the same frames when fed one byte at a time', () => {
    const stream = '<13>a\r\n<14>bb\n\n<15>ccc\0';
    expect(texts(bytewise(stream))).toEqual(['<13>a', '<14>bb', '<15>ccc']);
  });

  it('skips empty lines between messages', () => {
    expect(texts(split(['\n\r\n\0<13>a\n\n\n<13>b\n']))).toEqual(['<13>a', '<13>b']);
  });

  it('does not take a plain line starting with digits for an octet count', () => {
    expect(texts(split(['123 apples\n2024-01-02 text\n0 <13>zero\n']))).toEqual([
      '123 apples',
      '2024-01-02 text',
      '0 <13>zero',
    ]);
  });

  it('returns a trailing unterminated line on end, without a stray CR', () => {
    expect(split(['<13>last\r'])).toEqual([
      { text: '<13>last', truncated: false, framing: 'non-transparent' },
    ]);
  });

  it('cuts an over-long message, flags it and drops the rest up to the terminator', () => {
    const frames = split(['<13>abcdefghij', 'klmnop', 'qrstuvwxyz\n<13>ok\n'], 8);
    expect(frames).toEqual([
      { text: '<13>abcd', truncated: true, framing: 'non-transparent' },
      { text: '<13>ok', truncated: false, framing: 'non-transparent' },
    ]);
  });

  it('cuts an over-long message that arrives complete in one chunk', () => {
    expect(split(['<13>abcdefghij\n<13>ok\n'], 8)).toEqual([
      { text: '<13>abcd', truncated: true, framing: 'non-transparent' },
      { text: '<13>ok', truncated: false, framing: 'non-transparent' },
    ]);
  });

  it('keeps a message of exactly the limit whole', () => {
    expect(split(['<13>abcd\n'], 8)).toEqual([
      { text: '<13>abcd', truncated: false, framing: 'non-transparent' },
    ]);
  });

  it('keeps memory bounded while discarding an endless line', () => {
    const splitter = new SyslogFrameSplitter(1024);
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const frames: SyslogFrame[] = [];
    for (let i = 0; i < 32; i++) frames.push(...splitter.push(chunk));
    expect(frames).toHaveLength(1);
    expect(frames[0]!.truncated).toBe(true);
    expect(frames[0]!.text).toHaveLength(1024);
    // Private state, read on purpose: the point of this test is the buffer's size.
    expect((splitter as unknown as { buffer: Buffer }).buffer.length).toBe(0);
    expect(texts(splitter.push(enc('tail\n<13>next\n')))).toEqual(['<13>next']);
  });
});

describe('SyslogFrameSplitter: octet counting', () => {
  it('reads MSG-LEN SP MSG frames, newlines inside included', () => {
    const frames = split([octet('<13>multi\nline') + octet('<14>two')]);
    expect(frames).toEqual([
      { text: '<13>multi\nline', truncated: false, framing: 'octet-counting' },
      { text: '<14>two', truncated: false, framing: 'octet-counting' },
    ]);
  });

  it('counts bytes, not characters', () => {
    expect(texts(split([octet('<13>é€😀') + octet('<13>x')]))).toEqual(['<13>é€😀', '<13>x']);
  });

  it('gives the same frames when fed one byte at a time', () => {
    const stream = octet('<13>first message') + octet('<14>ünïcødé');
    expect(texts(bytewise(stream))).toEqual(['<13>first message', '<14>ünïcødé']);
  });

  it('tolerates a newline after each counted frame and mixes with newline framing', () => {
    const stream = `${octet('<13>a')}\n<13>plain\n${octet('<13>b')}\r\n`;
    expect(split([stream]).map((f) => [f.text, f.framing])).toEqual([
      ['<13>a', 'octet-counting'],
      ['<13>plain', 'non-transparent'],
      ['<13>b', 'octet-counting'],
    ]);
  });

  it('cuts a frame longer than the limit and skips its rest across chunks', () => {
    const big = `<13>${'x'.repeat(30)}`;
    const stream = octet(big) + octet('<13>after');
    const bytes = enc(stream);
    const chunks = [bytes.subarray(0, 5), bytes.subarray(5, 20), bytes.subarray(20, 30), bytes.subarray(30)];
    expect(split(chunks, 10)).toEqual([
      { text: '<13>xxxxxx', truncated: true, framing: 'octet-counting' },
      { text: '<13>after', truncated: false, framing: 'octet-counting' },
    ]);
  });

  it('flags a frame cut short by the end of the connection', () => {
    expect(split(['20 <13>only part'])).toEqual([
      { text: '<13>only part', truncated: true, framing: 'octet-counting' },
    ]);
  });

  it('skips an absurd count without buffering it', () => {
    const splitter = new SyslogFrameSplitter(16);
    const frames = splitter.push(enc(`9999999999 <13>${'y'.repeat(100)}`));
    expect(frames).toEqual([{ text: `<13>${'y'.repeat(12)}`, truncated: true, framing: 'octet-counting' }]);
    expect((splitter as unknown as { buffer: Buffer }).buffer.length).toBe(0);
  });

  it('falls back to newline framing for an over-long run of digits', () => {
    expect(texts(split(['12345678901 <13>x\n']))).toEqual(['12345678901 <13>x']);
  });
});

describe('SyslogFrameSplitter: text', () => {
  it('does not end a truncated frame in half a character', () => {
    expect(split(['<1>aa€€\n'], 8)).toEqual([
      { text: '<1>aa€', truncated: true, framing: 'non-transparent' },
    ]);
    expect(split(['<1>aaa€€\n'], 8)).toEqual([
      { text: '<1>aaa', truncated: true, framing: 'non-transparent' },
    ]);
    expect(split(['<1>aa😀\n'], 8)).toEqual([{ text: '<1>aa', truncated: true, framing: 'non-transparent' }]);
    expect(split([octet('<1>aa😀x')], 8)).toEqual([
      { text: '<1>aa', truncated: true, framing: 'octet-counting' },
    ]);
  });

  it('replaces invalid UTF-8 instead of failing (senders are not all UTF-8)', () => {
    const frames = split([Buffer.concat([enc('<13>caf'), Uint8Array.of(0xe9), enc('\n')])]);
    expect(frames[0]!.text).toBe('<13>caf\uFFFD');
  });

  it('has a 64 KiB default limit and refuses a nonsensical one', () => {
    expect(DEFAULT_MAX_SYSLOG_MESSAGE_BYTES).toBe(65_536);
    expect(new SyslogFrameSplitter().maxMessageBytes).toBe(65_536);
    expect(() => new SyslogFrameSplitter(0)).toThrow(RangeError);
    expect(() => new SyslogFrameSplitter(1.5)).toThrow(RangeError);
  });
});

describe('SyslogFrameSplitter: any chunking', () => {
  const message = fc
    .tuple(fc.integer({ min: 0, max: 191 }), fc.string({ unit: 'grapheme', maxLength: 40 }))
    .map(([pri, text]) => `<${pri}>${text.replace(/[\n\r\0]/g, ' ')}`);
  const framed = fc.tuple(message, fc.constantFrom('octet', 'lf', 'crlf', 'nul'));

  it('gives the same messages however the stream is cut into chunks', () => {
    fc.assert(
      fc.property(
        fc.array(framed, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (messages, cuts) => {
          const stream = Buffer.concat(
            messages.map(([text, framing]) =>
              enc(
                framing === 'octet'
                  ? octet(text)
                  : `${text}${framing === 'lf' ? '\n' : framing === 'crlf' ? '\r\n' : '\0'}`,
              ),
            ),
          );
          const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
          const chunks: Uint8Array[] = [];
          let last = 0;
          for (const p of [...points, stream.length]) {
            chunks.push(stream.subarray(last, p));
            last = p;
          }
          const frames = split(chunks);
          expect(texts(frames)).toEqual(messages.map(([text]) => text));
          expect(frames.every((f) => !f.truncated)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
