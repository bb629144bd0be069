import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { Validator } from '@seriousme/openapi-schema-validator';
import protobuf from 'protobufjs';
import { compressSync } from 'snappy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import winston from 'winston';
import LokiTransport from 'winston-loki';
import { BACKEND } from '../../helpers/app.js';
import { storedEvents } from '../../helpers/events.js';
import {
  awaitEvents,
  type FoundEvent,
  type Logscope,
  searchEvents,
  startLogscope,
} from '../../helpers/shippers.js';

// The Loki push intake, fed by the real winston-loki client (protobuf + snappy by
// default, JSON with `json: true`) and by hand-made bodies, read back through Search.

const PUSH = '/loki/api/v1/push';
const PROTO = new URL('../../../proto/loki/push.proto', import.meta.url);

/** winston's npm levels and the severities Logscope stores for them. */
const LEVELS = [
  ['info', 'info'],
  ['warn', 'warning'],
  ['error', 'error'],
  ['debug', 'debug'],
] as const;

interface PbEntry {
  timestamp: { seconds: number; nanos: number };
  line: string;
  structuredMetadata?: Array<{ name: string; value: string }>;
}

describe(`Loki push intake on ${BACKEND}`, () => {
  let ls: Logscope;
  let pushType: protobuf.Type;
  beforeAll(async () => {
    ls = await startLogscope();
    pushType = (await protobuf.load(fileURLToPath(PROTO))).lookupType('logproto.PushRequest');
  });
  afterAll(() => ls?.close());

  /** A snappy-compressed PushRequest, as Promtail and Alloy send. */
  const protoBody = (streams: Array<{ labels: string; entries: PbEntry[] }>) =>
    compressSync(pushType.encode(pushType.create({ streams })).finish());

  const push = (
    payload: Buffer | string,
    contentType: string,
    headers: Record<string, string> = {},
    token: string | null = ls.ingestToken,
  ) =>
    ls.t.app.inject({
      method: 'POST',
      url: PUSH,
      payload,
      headers: {
        'content-type': contentType,
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...headers,
      },
    });

  const total = async () => (await storedEvents(ls.t)).length;

  /** Sends `n` lines through winston-loki; returns what was sent and what arrived. */
  async function shipWithWinston(
    name: string,
    n: number,
    options: Partial<ConstructorParameters<typeof LokiTransport>[0]>,
  ) {
    const marker = `winston-loki-${name}-${Date.now().toString(36)}`;
    const base = Date.now() - 3_600_000;
    const errors: unknown[] = [];
    const transport = new LokiTransport({
      host: ls.url,
      labels: { app: `shop-${name}`, host: 'web-1', env: 'prod' },
      replaceTimestamp: false,
      gracefulShutdown: false,
      interval: 60,
      onConnectionError: (err: unknown) => errors.push(err),
      ...options,
    });
    const logger = winston.createLogger({ level: 'debug', transports: [transport] });
    const sent = Array.from({ length: n }, (_, i) => {
      const [level, severity] = LEVELS[i % LEVELS.length]!;
      return { i, level, severity, message: `${marker} line ${i}`, ms: base + i * 7 };
    });
    for (const s of sent) {
      logger.log({
        level: s.level,
        message: s.message,
        timestamp: new Date(s.ms).toISOString(),
        labels: { team: s.i % 2 ? 'odd' : 'even' },
        requestId: `r-${s.i}`,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    await transport.close();
    const events = await awaitEvents(ls, marker, n);
    return { sent, events, errors };
  }

  /** Each sent line exactly once, with its labels as fields, level, time and message. */
  function expectArrived(
    sent: Array<{ i: number; severity: string; message: string; ms: number }>,
    events: FoundEvent[],
    app: string,
    message: (s: { i: number; message: string }) => string,
  ) {
    expect(events).toHaveLength(sent.length);
    for (const s of sent) {
      const got = events.filter((e) => e.message === message(s));
      expect(got, message(s)).toHaveLength(1);
      expect(got[0]).toMatchObject({
        app,
        host: 'web-1',
        severity: s.severity,
        env: 'prod',
        team: s.i % 2 ? 'odd' : 'even',
        intake: 'loki:admin',
      });
      expect(got[0]?.ts).toBe(s.ms / 1000);
    }
  }

  it('stores what winston-loki sends as protobuf + snappy (Bearer INGEST token), each line once', async () => {
    const { sent, events, errors } = await shipWithWinston('proto', 24, {
      headers: { authorization: `Bearer ${ls.ingestToken}` },
      format: winston.format.printf((info) => String(info.message)),
    });
    expect(errors).toEqual([]);
    expectArrived(sent, events, 'shop-proto', (s) => s.message);
    // winston-loki's protobuf mode sends no structured metadata: the meta is not a field.
    expect(events[0]).not.toHaveProperty('requestId');
  });

  it('stores what winston-loki sends as JSON (HTTP Basic, USER token as password), with metadata', async () => {
    const { sent, events, errors } = await shipWithWinston('json', 20, {
      json: true,
      basicAuth: `admin:${ls.t.adminToken}`,
    });
    expect(errors).toEqual([]);
    // The line as winston-loki writes it (message, then the meta as JSON), stored as is.
    const line = (s: { i: number; message: string }) =>
      `${s.message} ${JSON.stringify({ level: sent[s.i]!.level, requestId: `r-${s.i}` })}`;
    expectArrived(sent, events, 'shop-json', line);
    // Structured metadata became fields; `level` (sent as label and metadata) only once.
    for (const e of events) {
      const i = sent.findIndex((s) => e.message === line(s));
      expect(e.requestId).toBe(`r-${i}`);
      expect(e).not.toHaveProperty('loki.level');
    }
  });

  it('stores a hand-made protobuf push: escapes, metadata, ns time, service_name → app', async () => {
    const marker = `pb-${Date.now().toString(36)}`;
    const seconds = Math.floor(Date.now() / 1000) - 600;
    const body = protoBody([
      {
        labels: `{service_name="checkout", host="db-2", level="warn", quote="a \\"b\\" \\\\ c\\nd"}`,
        entries: [
          {
            timestamp: { seconds, nanos: 123_456_789 },
            line: `{"msg":"${marker} json line"}`,
            structuredMetadata: [{ name: 'trace_id', value: 'abc123' }],
          },
          { timestamp: { seconds: seconds + 1, nanos: 0 }, line: `${marker} second` },
        ],
      },
      { labels: '{app="billing"}', entries: [{ timestamp: { seconds, nanos: 5 }, line: `${marker} third` }] },
    ]);
    const res = await push(body, 'application/x-protobuf');
    expect(res.statusCode, res.body).toBe(204);
    expect(res.body).toBe('');
    const events = await searchEvents(ls, marker);
    expect(events).toHaveLength(3);
    const first = events.find((e) => e.message === `{"msg":"${marker} json line"}`);
    expect(first).toMatchObject({
      app: 'checkout',
      service_name: 'checkout',
      host: 'db-2',
      severity: 'warning',
      quote: 'a "b" \\ c\nd',
      trace_id: 'abc123',
      intake: 'loki:admin',
    });
    expect(first?.ts).toBe((seconds * 1000 + 123) / 1000);
    expect(events.find((e) => e.message === `${marker} second`)?.ts).toBe(seconds + 1);
    expect(events.find((e) => e.message === `${marker} third`)).toMatchObject({ app: 'billing' });
  });

  it('stores a gzip-compressed JSON push', async () => {
    const marker = `json-gz-${Date.now().toString(36)}`;
    const ns = `${Date.now() - 60_000}000042`;
    const body = gzipSync(
      JSON.stringify({
        streams: [
          {
            stream: { app: 'api', host: 'web-9', level: 'error' },
            values: [
              [ns, `${marker} one`],
              [ns, `${marker} two`, { user_id: 'u-7' }],
            ],
          },
        ],
      }),
    );
    const res = await push(body, 'application/json', { 'content-encoding': 'gzip' });
    expect(res.statusCode, res.body).toBe(204);
    const events = await searchEvents(ls, marker);
    expect(events.map((e) => e.message).sort()).toEqual([`${marker} one`, `${marker} two`]);
    for (const e of events) {
      expect(e).toMatchObject({ app: 'api', host: 'web-9', severity: 'error' });
      expect(e.ts).toBe(Number(ns.slice(0, -6)) / 1000);
    }
    expect(events.find((e) => e.message === `${marker} two`)?.user_id).toBe('u-7');
  });

  it('answers 400 in plain text and stores nothing for a malformed body', async () => {
    const before = await total();
    const ok = { labels: '{app="x"}', entries: [{ timestamp: { seconds: 1.8e9, nanos: 0 }, line: 'ok' }] };
    const nowNs = `${Date.now()}000000`;
    const cases: Array<[string, Buffer | string, string, RegExp]> = [
      ['bad snappy', Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0xff]), 'application/x-protobuf', /snappy/],
      [
        'no snappy preamble',
        Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
        'application/x-protobuf',
        /snappy/,
      ],
      [
        'bad protobuf',
        compressSync(Buffer.from([0x0a, 0xff, 0x01])),
        'application/x-protobuf',
        /PushRequest/,
      ],
      [
        'bad labels',
        protoBody([ok, { labels: '{app="y", bad-name="z"}', entries: ok.entries }]),
        'application/x-protobuf',
        /^streams\[1\]: invalid stream labels .*expected "=" after bad at offset 13\n$/,
      ],
      [
        'zero timestamp',
        protoBody([
          ok,
          { labels: '{app="y"}', entries: [{ timestamp: { seconds: 0, nanos: 0 }, line: 'z' }] },
        ]),
        'application/x-protobuf',
        /out of range/,
      ],
      ['bad JSON', '{"streams": [', 'application/json', /not valid JSON/],
      [
        'bad ns timestamp',
        JSON.stringify({
          streams: [
            { stream: { app: 'x' }, values: [[nowNs, 'fine']] },
            { stream: { app: 'x' }, values: [['2026-01-01T00:00:00Z', 'not ns']] },
          ],
        }),
        'application/json',
        /streams\[1\]\.values\[0\]: timestamp must be Unix nanoseconds/,
      ],
      [
        'ns timestamp as a number',
        JSON.stringify({ streams: [{ stream: { app: 'x' }, values: [[1.7e18, 'number']] }] }),
        'application/json',
        /timestamp must be Unix nanoseconds/,
      ],
      [
        'no labels',
        JSON.stringify({ streams: [{ stream: {}, values: [[nowNs, 'x']] }] }),
        'application/json',
        /at least one label/,
      ],
      ['not a push', JSON.stringify({ message: 'x' }), 'application/json', /"streams" array/],
    ];
    for (const [name, body, type, reason] of cases) {
      const res = await push(body, type);
      expect(res.statusCode, `${name}: ${res.body}`).toBe(400);
      expect(res.headers['content-type'], name).toBe('text/plain; charset=utf-8');
      expect(res.body, name).toMatch(reason);
    }
    expect(await total()).toBe(before);
  });

  it('refuses, before decompressing, a body that would inflate past the limit (413)', async () => {
    const before = await total();
    // The preamble claims 4 GiB - 1; the rest is never looked at.
    const res = await push(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]), 'application/x-protobuf');
    expect(res.statusCode, res.body).toBe(413);
    expect(res.body).toMatch(/decompresses to 4294967295 bytes/);
    expect(await total()).toBe(before);
  });

  it('answers 401 without a valid token and 415 for other media types, in plain text', async () => {
    const body = protoBody([{ labels: '{app="x"}', entries: [] }]);
    const none = await push(body, 'application/x-protobuf', {}, null);
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Token');
    expect(none.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect((await push(body, 'application/x-protobuf', {}, 'lsnope_nope')).statusCode).toBe(401);
    const basicWrong = await push(body, 'application/x-protobuf', {
      authorization: `Basic ${Buffer.from('admin:wrong').toString('base64')}`,
    });
    expect(basicWrong.statusCode).toBe(401);
    const text = await push('hello', 'text/plain');
    expect(text.statusCode).toBe(415);
    expect(text.body).toMatch(/application\/x-protobuf/);
    const br = await push(body, 'application/x-protobuf', { 'content-encoding': 'br' });
    expect(br.statusCode).toBe(415);
    // An empty push stores nothing and says so with success, as Loki does.
    expect((await push(body, 'application/x-protobuf')).statusCode).toBe(204);
    expect((await push('{"streams":[]}', 'application/json')).statusCode).toBe(204);
  });

  it('is in a valid OpenAPI document', async () => {
    const res = await ls.t.app.inject({ method: 'GET', url: '/api/schema' });
    const doc = res.json();
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(doc.paths[PUSH].post.responses).toHaveProperty(['204']);
  });
});
