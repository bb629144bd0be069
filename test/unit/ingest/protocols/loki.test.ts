import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { compressSync } from 'snappy';
import { beforeAll, describe, expect, it } from 'vitest';
import { normaliseRecord } from '../../../../src/ingest/normalise.js';
import {
  decodeLokiJson,
  decodeLokiProtobuf,
  LokiPushError,
  type LokiStream,
  lokiRecords,
  parseLabels,
  snappyLength,
} from '../../../../src/ingest/protocols/loki.js';

const LIMIT = 1 << 20;

/** Prometheus label syntax for pairs, escaping as Promtail does. */
const labelText = (pairs: Array<[string, string]>) =>
  `{${pairs.map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`).join(', ')}}`;

describe('parseLabels', () => {
  it('reads names and quoted values with the three escapes, in order', () => {
    expect(parseLabels('{a="b", c="d\\"e"}')).toEqual([
      ['a', 'b'],
      ['c', 'd"e'],
    ]);
    expect(parseLabels(' { _x1 = "back\\\\slash\\nnew" ,level="info"} ')).toEqual([
      ['_x1', 'back\\slash\nnew'],
      ['level', 'info'],
    ]);
    expect(parseLabels('{}')).toEqual([]);
    expect(parseLabels('{a=""}')).toEqual([['a', '']]);
    expect(parseLabels('{emoji="ü ☃ 😀", comma=",}{"}')).toEqual([
      ['emoji', 'ü ☃ 😀'],
      ['comma', ',}{'],
    ]);
  });

  it.each([
    ['', /expected "\{"/],
    ['a="b"', /expected "\{"/],
    ['{a="b"', /expected "," or "}"/],
    ['{a="b",}', /expected a label name/],
    ['{a="b" c="d"}', /expected "," or "}"/],
    ['{1a="b"}', /expected a label name/],
    ['{a-b="c"}', /expected "=" after a/],
    ['{a.b="c"}', /expected "=" after a/],
    ['{a=b}', /expected a double-quoted value for a/],
    ["{a='b'}", /expected a double-quoted value/],
    ['{a="b}', /unterminated value of a/],
    ['{a="\\t"}', /unknown escape "\\t"/],
    ['{a="\\u00e9"}', /unknown escape "\\u"/],
    ['{a="x\\', /unknown escape/],
    ['{a="line\nbreak"}', /line break in the value of a/],
    ['{a="1", a="2"}', /label a repeated/],
    ['{a="b"} x', /unexpected text after "}"/],
  ])('refuses %j', (text, reason) => {
    expect(() => parseLabels(text)).toThrow(LokiPushError);
    expect(() => parseLabels(text)).toThrow(reason);
  });

  it('reads back whatever a sender escapes properly', () => {
    const pair = fc.tuple(
      fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_]{0,15}$/),
      fc.string({ unit: 'grapheme' }),
    );
    fc.assert(
      fc.property(fc.uniqueArray(pair, { selector: ([k]) => k, maxLength: 8 }), (pairs) => {
        expect(parseLabels(labelText(pairs))).toEqual(pairs);
      }),
    );
  });
});

describe('snappyLength', () => {
  it('reads the varint preamble of a snappy block', () => {
    expect(snappyLength(compressSync(Buffer.alloc(0)))).toBe(0);
    expect(snappyLength(compressSync(Buffer.alloc(300, 1)))).toBe(300);
    expect(snappyLength(compressSync(Buffer.alloc(70_000, 7)))).toBe(70_000);
    expect(snappyLength(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]))).toBe(0xffff_ffff);
    expect(snappyLength(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x1f]))).toBeNull();
    expect(snappyLength(Buffer.from([0x80, 0x80]))).toBeNull();
    expect(snappyLength(Buffer.alloc(0))).toBeNull();
  });
});

describe('Loki push decoders', () => {
  let pushType: protobuf.Type;
  beforeAll(async () => {
    const proto = new URL('../../../../proto/loki/push.proto', import.meta.url);
    pushType = (await protobuf.load(fileURLToPath(proto))).lookupType('logproto.PushRequest');
  });

  /** One push, as the two encodings carry it. */
  const PUSH = [
    {
      labels: [
        ['service_name', 'checkout'],
        ['host', 'web-1'],
        ['level', 'warn'],
        ['quote', 'say "hi"\\\n'],
        ['timestamp', 'label named like a time'],
        ['empty', ''],
      ] as Array<[string, string]>,
      entries: [
        { seconds: 1_767_225_600, nanos: 123_456_789, line: '{"json": "stays a line"}', metadata: [] },
        {
          seconds: 1_767_225_601,
          nanos: 0,
          line: 'with metadata',
          metadata: [
            ['trace_id', 'abc'],
            ['level', 'warn'],
            ['host', 'other-host'],
            ['ts', 'meta named ts'],
            ['span.id', 'dotted'],
          ] as Array<[string, string]>,
        },
      ],
    },
    {
      labels: [['app', 'billing']] as Array<[string, string]>,
      entries: [{ seconds: 1_767_225_602, nanos: 5, line: '', metadata: [] }],
    },
  ];

  const asProtobuf = () =>
    compressSync(
      pushType
        .encode(
          pushType.create({
            streams: PUSH.map((s) => ({
              labels: labelText(s.labels),
              entries: s.entries.map((e) => ({
                timestamp: { seconds: e.seconds, nanos: e.nanos },
                line: e.line,
                structuredMetadata: e.metadata.map(([name, value]) => ({ name, value })),
              })),
            })),
          }),
        )
        .finish(),
    );

  const ns = (e: { seconds: number; nanos: number }) =>
    String(BigInt(e.seconds) * 1_000_000_000n + BigInt(e.nanos));
  const asJson = () =>
    Buffer.from(
      JSON.stringify({
        streams: PUSH.map((s) => ({
          stream: Object.fromEntries(s.labels),
          values: s.entries.map((e) =>
            e.metadata.length ? [ns(e), e.line, Object.fromEntries(e.metadata)] : [ns(e), e.line],
          ),
        })),
      }),
    );

  it('give the same records for the same push, as documented', async () => {
    const fromProtobuf = lokiRecords(await decodeLokiProtobuf(asProtobuf(), LIMIT, 100_000));
    const fromJson = lokiRecords(decodeLokiJson(asJson()));
    expect(fromJson).toEqual(fromProtobuf);
    expect(fromProtobuf).toEqual([
      {
        ts: '1767225600123456789',
        message: '{"json": "stays a line"}',
        service_name: 'checkout',
        host: 'web-1',
        level: 'warn',
        quote: 'say "hi"\\\n',
        'loki.timestamp': 'label named like a time',
        app: 'checkout',
      },
      {
        ts: '1767225601000000000',
        message: 'with metadata',
        service_name: 'checkout',
        host: 'web-1',
        level: 'warn',
        quote: 'say "hi"\\\n',
        'loki.timestamp': 'label named like a time',
        trace_id: 'abc',
        'loki.host': 'other-host',
        'loki.ts': 'meta named ts',
        'span.id': 'dotted',
        app: 'checkout',
      },
      { ts: '1767225602000000005', message: '', app: 'billing' },
    ]);
  });

  it('make records the normaliser reads as intended', async () => {
    const [first] = lokiRecords(await decodeLokiProtobuf(asProtobuf(), LIMIT, 100_000));
    const result = normaliseRecord(first, { receivedAt: 0, intake: 'loki:test', newId: () => 'id' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.event).toMatchObject({
      ts: 1_767_225_600_123,
      message: '{"json": "stays a line"}',
      host: 'web-1',
      app: 'checkout',
      severity: 'warning',
      intake: 'loki:test',
    });
    expect(result.event.fields).toEqual({
      service_name: 'checkout',
      quote: 'say "hi"\\\n',
      'loki.timestamp': 'label named like a time',
    });
  });

  it('refuse a stream without labels, a bad name, bad timestamps and values', async () => {
    const json = (body: unknown) => () => decodeLokiJson(Buffer.from(JSON.stringify(body)));
    const now = '1767225600000000000';
    expect(json({ streams: [{ stream: { a: '' }, values: [] }] })).toThrow(/at least one label/);
    expect(json({ streams: [{ stream: { 'a.b': 'x' }, values: [] }] })).toThrow(/label name "a.b"/);
    expect(json({ streams: [{ stream: { a: 1 }, values: [] }] })).toThrow(/stream\.a must be a string/);
    expect(json({ streams: [{ stream: { a: 'x' }, values: [['99999999999999999', 'x']] }] })).toThrow(
      /out of range/,
    );
    expect(json({ streams: [{ stream: { a: 'x' }, values: [['9223372036854775808', 'x']] }] })).toThrow(
      /out of range/,
    );
    expect(json({ streams: [{ stream: { a: 'x' }, values: [['-1', 'x']] }] })).toThrow(/string of digits/);
    expect(json({ streams: [{ stream: { a: 'x' }, values: [[now]] }] })).toThrow(/must be \["<unix ns>"/);
    expect(json({ streams: [{ stream: { a: 'x' }, values: [[now, 3]] }] })).toThrow(/line must be a string/);
    expect(json({ streams: [{ stream: { a: 'x' }, values: [[now, 'x', { k: 1 }]] }] })).toThrow(
      /values\[0\]\[2\]\.k must be a string/,
    );
    expect(json({ streams: [{ stream: { a: 'x' }, values: [[now, 'x', { '': 'v' }]] }] })).toThrow(
      /empty name/,
    );
    expect(() => decodeLokiJson(Buffer.from([0x7b, 0xff]))).toThrow(/UTF-8/);
    const pb = (entries: unknown[]) =>
      decodeLokiProtobuf(
        compressSync(
          pushType.encode(pushType.create({ streams: [{ labels: '{a="x"}', entries }] })).finish(),
        ),
        LIMIT,
        100_000,
      );
    await expect(pb([{ line: 'no time' }])).rejects.toThrow(/no timestamp/);
    await expect(pb([{ timestamp: { seconds: 1_767_225_600, nanos: 1e9 }, line: 'x' }])).rejects.toThrow(
      /nanos/,
    );
    await expect(pb([{ timestamp: { seconds: -5, nanos: 0 }, line: 'x' }])).rejects.toThrow(/out of range/);
  });

  it('refuse what decompresses past the limit, before decompressing', async () => {
    const body = compressSync(Buffer.alloc(5000, 1));
    await expect(decodeLokiProtobuf(body, 4999, 100_000)).rejects.toMatchObject({ status: 413 });
    const framed = Buffer.from([0xff, 0x06, 0x00, 0x00, 0x73, 0x4e, 0x61, 0x50, 0x70, 0x59, 0x00]);
    await expect(decodeLokiProtobuf(framed, LIMIT, 100_000)).rejects.toThrow(/framed/);
  });

  it('refuse an entry the normaliser would refuse, rather than store the push in part', () => {
    const many: LokiStream = {
      labels: [['a', 'x']],
      entries: [
        { ns: 10n ** 18n, line: 'x', metadata: Array.from({ length: 1000 }, (_, i) => [`m${i}`, 'v']) },
      ],
    };
    expect(() => lokiRecords([many])).toThrow(/limit 1000/);
    const long: LokiStream = {
      labels: [['a', 'x']],
      entries: [{ ns: 10n ** 18n, line: 'x', metadata: [['n'.repeat(300), 'v']] }],
    };
    expect(() => lokiRecords([long])).toThrow(/longer than 256/);
  });
});
