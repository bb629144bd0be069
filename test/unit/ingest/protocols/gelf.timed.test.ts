import { deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { normaliseRecord } from '../../../../src/ingest/normalise.js';
import {
  decodeGelfDatagram,
  decodeGelfPayload,
  GelfChunkAssembler,
  GelfFrameSplitter,
  gelfToRecord,
  parseGelfChunk,
} from '../../../../src/ingest/protocols/gelf.js';

const ID = Buffer.from('0102030405060708', 'hex');

/** A chunk datagram: magic, 8-byte id, sequence number, count, data. */
const chunk = (seq: number, count: number, data: Buffer | string, id = ID) =>
  Buffer.concat([Buffer.from([0x1e, 0x0f]), id, Buffer.from([seq, count]), Buffer.from(data)]);

const split = (payload: Buffer, parts: number) => {
  const size = Math.ceil(payload.length / parts);
  return Array.from({ length: parts }, (_, i) => payload.subarray(i * size, (i + 1) * size));
};

const record = (message: unknown) => {
  const result = gelfToRecord(message);
  if (!result.ok) throw new Error(result.detail);
  return { ...result.record };
};

describe('gelfToRecord', () => {
  it('maps the GELF fields the way Graylog stores them', () => {
    expect(
      record({
        version: '1.1',
        host: 'web-1',
        short_message: 'login failed',
        full_message: 'login failed\nstack',
        timestamp: 1767225600.123456,
        level: 3,
        facility: 'auth',
        line: 42,
        file: 'app.js',
        _user_id: 7,
        _src_ip: '10.0.0.5',
        _http: { status: 500 },
      }),
    ).toEqual({
      message: 'login failed',
      host: 'web-1',
      full_message: 'login failed\nstack',
      ts: 1767225600.123456,
      severity: 3,
      facility: 'auth',
      line: 42,
      file: 'app.js',
      user_id: 7,
      src_ip: '10.0.0.5',
      http: { status: 500 },
    });
  });

  it('keeps names that clash, _id, and keys the spec does not name', () => {
    expect(
      record({
        short_message: 'm',
        _message: 'additional message',
        _id: 'x',
        _: 'bare underscore',
        custom: 1,
        _custom: 2,
        level: 6,
        severity: 'info',
      }),
    ).toEqual({
      message: 'm',
      _message: 'additional message',
      _id: 'x',
      _: 'bare underscore',
      custom: 1,
      _custom: 2,
      severity: 6,
      'orig.severity': 'info',
    });
  });

  it('treats __proto__ as an ordinary key', () => {
    const parsed = JSON.parse('{"short_message":"m","___proto__":{"polluted":1}}');
    const r = gelfToRecord(parsed);
    expect(r.ok).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    if (r.ok) expect(Object.hasOwn(r.record, '__proto__')).toBe(true);
  });

  it.each([
    ['not an object', [{ short_message: 'a' }], /JSON object, got an array/],
    ['a string', 'hello', /JSON object, got a string/],
    ['no short_message', { host: 'h' }, /no short_message/],
    ['an empty short_message', { short_message: '  ' }, /non-empty string/],
    ['an object short_message', { short_message: { a: 1 } }, /non-empty string/],
    ['version 2.0', { version: '2.0', short_message: 'a' }, /version "2\.0" is not 1\.1/],
    ['version as object', { version: {}, short_message: 'a' }, /version/],
  ])('refuses %s', (_name, message, detail) => {
    const result = gelfToRecord(message);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.detail).toMatch(detail);
  });

  it('accepts a missing version, 1.0 and a number short_message', () => {
    expect(gelfToRecord({ short_message: 'a' }).ok).toBe(true);
    expect(gelfToRecord({ version: '1.0', short_message: 'a' }).ok).toBe(true);
    expect(gelfToRecord({ version: 1.1, short_message: 5 }).ok).toBe(true);
  });

  it('gives the normaliser exact times and syslog severities', () => {
    const ctx = { receivedAt: 0, intake: 'gelf:test', newId: () => 'id' };
    const result = normaliseRecord(
      record({ short_message: 'm', host: 'h', level: 4, timestamp: 1767225600.123, _user_id: 'u1' }),
      ctx,
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.event).toMatchObject({
      message: 'm',
      host: 'h',
      severity: 'warning',
      ts: 1767225600123,
      fields: { user_id: 'u1' },
    });
  });
});

describe('decodeGelfPayload', () => {
  const message = JSON.stringify({ version: '1.1', short_message: 'zipped', host: 'h' });

  it('reads plain JSON, gzip and zlib', () => {
    for (const payload of [Buffer.from(message), gzipSync(message), deflateSync(message)]) {
      expect(decodeGelfPayload(payload)).toMatchObject({
        kind: 'message',
        record: { message: 'zipped' },
      });
    }
  });

  it('refuses a zip bomb without inflating it', () => {
    const bomb = deflateSync(Buffer.alloc(50 * 1024 * 1024, 0x20));
    const started = Date.now();
    expect(decodeGelfPayload(bomb).kind).toBe('too_large');
    expect(decodeGelfPayload(gzipSync(Buffer.alloc(2 << 20, 0x20))).kind).toBe('too_large');
    expect(Date.now() - started).toBeLessThan(1000);
    expect(decodeGelfPayload(Buffer.alloc(100, 0x20), 50).kind).toBe('too_large');
  });

  it('calls corrupt compression, non-JSON and non-GELF malformed', () => {
    expect(decodeGelfPayload(Buffer.from([0x1f, 0x8b, 1, 2, 3]))).toMatchObject({
      kind: 'malformed',
      detail: expect.stringMatching(/gzip/),
    });
    expect(decodeGelfPayload(Buffer.from([0x78, 0x9c, 1, 2, 3])).kind).toBe('malformed');
    expect(decodeGelfPayload(Buffer.from('{"short_message": '))).toMatchObject({
      kind: 'malformed',
      detail: expect.stringMatching(/not JSON/),
    });
    expect(decodeGelfPayload(Buffer.from('{"host":"h"}')).kind).toBe('malformed');
  });
});

describe('chunk reassembly', () => {
  const payload = deflateSync(
    JSON.stringify({ short_message: 'chunked', _pad: 'x'.repeat(5000), host: 'h' }),
  );

  it('reads a chunk header and refuses bad ones', () => {
    expect(parseGelfChunk(chunk(2, 3, 'abc'))).toMatchObject({
      id: '0102030405060708',
      seq: 2,
      count: 3,
      data: Buffer.from('abc'),
    });
    expect(parseGelfChunk(chunk(0, 129, 'a'))).toEqual({ error: expect.stringMatching(/count 129/) });
    expect(parseGelfChunk(chunk(0, 0, 'a'))).toEqual({ error: expect.stringMatching(/count 0/) });
    expect(parseGelfChunk(chunk(3, 3, 'a'))).toEqual({ error: expect.stringMatching(/number 3/) });
    expect(parseGelfChunk(Buffer.from([0x1e, 0x0f, 1]))).toEqual({ error: expect.stringMatching(/header/) });
  });

  it('joins chunks in any order, ignoring duplicates, also after completion', () => {
    const assembler = new GelfChunkAssembler();
    const parts = split(payload, 4).map((data, i) => chunk(i, 4, data));
    const results = [3, 1, 1, 0, 2, 2].map((i) => decodeGelfDatagram(parts[i]!, '10.0.0.1', assembler, 1000));
    expect(results.map((r) => r.kind)).toEqual([
      'pending',
      'pending',
      'pending',
      'pending',
      'message',
      'pending',
    ]);
    expect(results[4]).toMatchObject({ record: { message: 'chunked', host: 'h' } });
    expect(assembler.pendingMessages).toBe(0); // the late duplicate of chunk 2 opened nothing
    expect(assembler.incomplete).toBe(0);
  });

  it('keeps two senders with the same message id apart', () => {
    const assembler = new GelfChunkAssembler();
    const [a, b] = split(payload, 2);
    expect(decodeGelfDatagram(chunk(0, 2, a!), 'x', assembler, 0).kind).toBe('pending');
    expect(decodeGelfDatagram(chunk(1, 2, b!), 'y', assembler, 0).kind).toBe('pending');
    expect(decodeGelfDatagram(chunk(1, 2, b!), 'x', assembler, 0).kind).toBe('message');
  });

  it('drops a message whose chunks do not all arrive within the timeout', () => {
    const assembler = new GelfChunkAssembler({ timeoutMs: 5000 });
    const [a, b] = split(payload, 2);
    assembler.add(parseChunk(chunk(0, 2, a!)), 's', 0);
    assembler.sweep(5000);
    expect(assembler.pendingMessages).toBe(1);
    assembler.sweep(5001);
    expect(assembler.pendingMessages).toBe(0);
    expect(assembler.incomplete).toBe(1);
    // Its last chunk arriving late opens nothing and is not counted again.
    expect(assembler.add(parseChunk(chunk(1, 2, b!)), 's', 5002).kind).toBe('duplicate');
    expect(assembler.pendingChunkBytes).toBe(0);
  });

  it('is bounded in messages and bytes, evicting the oldest', () => {
    const assembler = new GelfChunkAssembler({ maxMessages: 2, maxBytes: 100 });
    const id = (n: number) => Buffer.from([0, 0, 0, 0, 0, 0, 0, n]);
    for (let n = 0; n < 3; n++) assembler.add(parseChunk(chunk(0, 2, 'x'.repeat(10), id(n))), 's', n);
    expect(assembler.pendingMessages).toBe(2);
    expect(assembler.incomplete).toBe(1);
    assembler.add(parseChunk(chunk(0, 2, 'y'.repeat(90), id(9))), 's', 10);
    expect(assembler.pendingChunkBytes).toBeLessThanOrEqual(100);
    expect(assembler.incomplete).toBe(2);
  });

  it('refuses a message reassembling past the size bound', () => {
    const assembler = new GelfChunkAssembler({ maxMessageBytes: 15 });
    expect(assembler.add(parseChunk(chunk(0, 2, 'x'.repeat(10))), 's', 0).kind).toBe('pending');
    expect(assembler.add(parseChunk(chunk(1, 2, 'x'.repeat(10))), 's', 0).kind).toBe('too_large');
    expect(assembler.pendingChunkBytes).toBe(0);
  });

  it('calls a count that changes within a message malformed', () => {
    const assembler = new GelfChunkAssembler();
    assembler.add(parseChunk(chunk(0, 2, 'a')), 's', 0);
    expect(assembler.add(parseChunk(chunk(1, 3, 'b')), 's', 0).kind).toBe('malformed');
  });
});

describe('GelfFrameSplitter', () => {
  it('splits at NUL across reads, takes a last frame at close and skips blanks', () => {
    const splitter = new GelfFrameSplitter(() => undefined);
    const frames = [
      ...splitter.push(Buffer.from('{"a":1}\0{"b"')),
      ...splitter.push(Buffer.from(':2}\0\n\0\0{"c":3}')),
      ...splitter.end(),
    ];
    expect(frames.map(String)).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it('skips a frame past the cap to its NUL, counting it once', () => {
    let oversized = 0;
    const splitter = new GelfFrameSplitter(() => oversized++, 10);
    const frames = [
      ...splitter.push(Buffer.from('x'.repeat(8))),
      ...splitter.push(Buffer.from('x'.repeat(8))),
      ...splitter.push(Buffer.from(`${'x'.repeat(8)}\0{"ok":1}\0${'y'.repeat(20)}`)),
      ...splitter.end(),
    ];
    expect(frames.map(String)).toEqual(['{"ok":1}']);
    expect(oversized).toBe(2);
  });
});

function parseChunk(datagram: Buffer) {
  const c = parseGelfChunk(datagram);
  if ('error' in c) throw new Error(c.error);
  return c;
}
