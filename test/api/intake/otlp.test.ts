import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { context, TraceFlags, trace } from '@opentelemetry/api';
import { type AnyValueMap, SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter } from '@opentelemetry/sdk-logs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../../src/core/event.js';
import { decodeStatus, otlpTypes } from '../../../src/ingest/protocols/otlp.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { messageOf, storedEvents } from '../../helpers/events.js';

const TRACE_ID = '5b8efff798038103d269b633813fc60c';
const SPAN_ID = 'eee19b7ec3c1b174';

const str = (stringValue: string) => ({ stringValue });

/** A protobuf field's tag: its number and wire type as one varint (numbers below 2048). */
const protobufTag = (field: number, wireType: number) => {
  const value = (field << 3) | wireType;
  return value < 0x80 ? [value] : [(value & 0x7f) | 0x80, value >> 7];
};

/** An OTLP/JSON request with one resource and scope around the given records. */
const jsonRequest = (logRecords: object[], service = 'hand-made') => ({
  resourceLogs: [
    {
      resource: { attributes: [{ key: 'service.name', value: str(service) }] },
      scopeLogs: [{ scope: { name: 'test' }, logRecords }],
    },
  ],
});

describe(`OTLP/HTTP logs intake on ${BACKEND}`, () => {
  let t: TestApp;
  let base: string;
  let ingestToken: string;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
    ingestToken = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'otel' })).secret_key;
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => t.close());

  /** The event as the API gives it (columns and fields by name, with their JSON types). */
  const apiEvent = async (e: StoredEvent) => {
    const res = await t.as(t.adminToken, { method: 'GET', url: `/api/events/${e.ev_id}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Record<string, unknown>;
  };

  const post = (payload: string | Buffer | object, headers: Record<string, string>, url = '/v1/logs') =>
    t.as(ingestToken, { method: 'POST', url, payload, headers });

  /**
   * Emits five records through the real SDK and exporter, flushes, and checks each
   * arrived once with its fields. `tag` keeps this run's events apart.
   */
  async function sendWithExporter(tag: string, real: LogRecordExporter) {
    // What the exporter made of our answers (the SDK only logs a failed export).
    const results: Array<{ code: number; error?: Error }> = [];
    const exporter: LogRecordExporter = {
      export: (records, done) =>
        real.export(records, (result) => {
          results.push(result);
          done(result);
        }),
      shutdown: () => real.shutdown(),
      forceFlush: () => real.forceFlush?.() ?? Promise.resolve(),
    };
    const provider = new LoggerProvider({
      resource: resourceFromAttributes({
        'service.name': `checkout-${tag}`,
        'host.name': `node-${tag}`,
        'deployment.environment': 'staging',
      }),
      processors: [new BatchLogRecordProcessor({ exporter })],
    });
    const logger = provider.getLogger('otlp-test', '1.2.3');
    const levels = [
      [SeverityNumber.DEBUG, 'DEBUG', 'debug'],
      [SeverityNumber.INFO, 'INFO', 'info'],
      [SeverityNumber.WARN, 'WARN', 'warning'],
      [SeverityNumber.ERROR, 'ERROR', 'error'],
      [SeverityNumber.FATAL, 'FATAL', 'critical'],
    ] as const;
    const at = Date.UTC(2026, 2, 1, 12, 0, 0);
    levels.forEach(([severityNumber, severityText], i) => {
      const attributes: AnyValueMap = { 'http.status_code': 200 + i, 'user.id': `u-${i}`, ok: i % 2 === 0 };
      if (i === 4) attributes.details = { reason: 'disk', retries: 3 };
      logger.emit({
        severityNumber,
        severityText,
        body: `${tag} record ${i}`,
        attributes,
        timestamp: at + i,
        ...(i === 1
          ? {
              context: trace.setSpanContext(context.active(), {
                traceId: TRACE_ID,
                spanId: SPAN_ID,
                traceFlags: TraceFlags.SAMPLED,
              }),
            }
          : {}),
      });
    });
    // A structured body: its keys become body.* fields.
    logger.emit({ severityNumber: SeverityNumber.INFO, body: { tag, action: 'login', n: 7 } });
    await provider.forceFlush();
    await provider.shutdown();
    expect(results.map((r) => r.error?.message ?? r.code)).toEqual([0]); // one export, SUCCESS

    const rows = await storedEvents(t, (e) => messageOf(e).startsWith(`${tag} record`));
    expect(rows.map(messageOf).sort()).toEqual(levels.map((_, i) => `${tag} record ${i}`));
    for (const row of rows) {
      const i = Number(messageOf(row).split(' ').pop());
      const ev = await apiEvent(row);
      expect(ev).toMatchObject({
        app: `checkout-${tag}`,
        host: `node-${tag}`,
        severity: levels[i]![2],
        severity_text: levels[i]![1],
        intake: 'otlp:admin',
        'resource.deployment.environment': 'staging',
        'scope.name': 'otlp-test',
        'scope.version': '1.2.3',
        'http.status_code': 200 + i,
        'user.id': `u-${i}`,
        ok: i % 2 === 0,
        ts: (at + i) / 1000,
      });
      if (i === 1) expect(ev).toMatchObject({ trace_id: TRACE_ID, span_id: SPAN_ID, trace_flags: 1 });
      else expect(ev).not.toHaveProperty('trace_id');
      if (i === 4) expect(ev).toMatchObject({ 'details.reason': 'disk', 'details.retries': 3 });
      expect(ev).not.toHaveProperty(['resource.service.name']);
    }
    const structured = await storedEvents(t, (e) => e.fields['body.tag'] === tag);
    expect(structured).toHaveLength(1);
    expect(await apiEvent(structured[0]!)).toMatchObject({
      'body.action': 'login',
      'body.n': 7,
      severity: 'info',
    });
  }

  it('stores what the real protobuf exporter sends, each record once', async () => {
    const exporter = new ProtoLogExporter({
      url: `${base}/v1/logs`,
      headers: { Authorization: `Bearer ${t.adminToken}` },
    });
    await sendWithExporter('proto', exporter);
  });

  it('stores what the real JSON exporter sends gzip-compressed, on the /api/ingest path', async () => {
    const exporter = new JsonLogExporter({
      url: `${base}/api/ingest/otlp/v1/logs`,
      headers: { Authorization: `Bearer ${t.adminToken}` },
      // The exporter's own enum value (CompressionAlgorithm.GZIP, of a package it depends on).
      compression: 'gzip' as NonNullable<ConstructorParameters<typeof JsonLogExporter>[0]>['compression'],
    });
    await sendWithExporter('json', exporter);
  });

  it('ingests the example request of the OTLP repository', async () => {
    const body = readFileSync(new URL('../../../proto/otel/examples/logs.json', import.meta.url));
    const res = await post(body, { 'content-type': 'application/json' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({});
    const [row] = await storedEvents(t, (e) => e.message === 'Example log record');
    expect(await apiEvent(row!)).toMatchObject({
      app: 'my.service',
      severity: 'info',
      severity_text: 'Information',
      ts: 1544712660.3,
      trace_id: TRACE_ID,
      span_id: SPAN_ID,
      'scope.name': 'my.library',
      'scope.my.scope.attribute': 'some scope attribute',
      'string.attribute': 'some string',
      'boolean.attribute': true,
      'int.attribute': 10,
      'double.attribute': 637.704,
      'map.attribute.some.map.key': 'some value',
    });
  });

  it('answers a malformed protobuf body with a 400 Status and stores nothing', async () => {
    const before = (await storedEvents(t)).length;
    // Field 1 (resource_logs), length-delimited, claiming far more bytes than follow.
    const res = await post(Buffer.from([0x0a, 0xff, 0x7f, 0x01]), {
      'content-type': 'application/x-protobuf',
    });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toBe('application/x-protobuf');
    const status = decodeStatus(res.rawPayload);
    expect(status.code).toBe(3);
    expect(status.message).toMatch(/not a protobuf ExportLogsServiceRequest/);
    expect((await storedEvents(t)).length).toBe(before);
  });

  it('answers bytes that are not protobuf with a 400 Status, never a 500', async () => {
    const before = (await storedEvents(t)).length;
    const garbage: Array<[string, Buffer, Record<string, string>]> = [
      ['text', Buffer.from('hello, this is not protobuf'), {}],
      ['0xff bytes', Buffer.alloc(40, 0xff), {}],
      ['JSON sent as protobuf', Buffer.from('{"resourceLogs":[]}'), {}],
      ['gzip of text', gzipSync('garbage that is not protobuf at all'), { 'content-encoding': 'gzip' }],
      ['not gzip', Buffer.from('not gzip'), { 'content-encoding': 'gzip' }],
      ['not deflate', Buffer.from('not deflate'), { 'content-encoding': 'deflate' }],
    ];
    // A tag of every wire type (0–7) on field 1, and on an unknown field: groups that never
    // end, ends of groups never begun, the two wire types protobuf does not define.
    for (let wireType = 0; wireType < 8; wireType++) {
      for (const field of [1, 99]) {
        const tag = Buffer.from(protobufTag(field, wireType));
        garbage.push([
          `wire type ${wireType} on field ${field}`,
          Buffer.concat([tag, Buffer.from([1, 2, 3])]),
          {},
        ]);
      }
    }
    for (const [what, payload, headers] of garbage) {
      // Over a real socket, as an exporter sends it.
      const res = await fetch(`${base}/v1/logs`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${ingestToken}`,
          'content-type': 'application/x-protobuf',
          ...headers,
        },
        body: payload,
      });
      expect(res.status, what).toBe(400);
      expect(res.headers.get('content-type'), what).toBe('application/x-protobuf');
      const status = decodeStatus(new Uint8Array(await res.arrayBuffer()));
      expect(status.code, what).toBe(3);
      expect(status.message, what).toMatch(/not a protobuf ExportLogsServiceRequest|not valid gzip\/deflate/);
    }
    expect((await storedEvents(t)).length).toBe(before);
  });

  it('answers malformed JSON with a 400 Status in JSON and stores nothing', async () => {
    const before = (await storedEvents(t)).length;
    const broken = await post('{"resourceLogs": [', { 'content-type': 'application/json' });
    expect(broken.statusCode).toBe(400);
    expect(broken.json()).toMatchObject({ code: 3, message: expect.stringMatching(/not valid JSON/) });
    // JSON, but one value of the wrong type: the whole request is refused.
    const wrong = await post(
      jsonRequest([{ body: str('fine') }, { body: str('not stored'), timeUnixNano: 'soon' }]),
      { 'content-type': 'application/json' },
    );
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().message).toMatch(/logRecords\[1\]\.timeUnixNano/);
    const badGzip = await post(Buffer.from('not gzip'), {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
    });
    expect(badGzip.statusCode).toBe(400);
    expect(badGzip.json().code).toBe(3);
    expect((await storedEvents(t)).length).toBe(before);
  });

  it('stores the acceptable records and reports the rejected ones as a partial success', async () => {
    const many = Array.from({ length: 1001 }, (_, i) => ({ key: `k${i}`, value: { intValue: i } }));
    const records = [
      { body: str('partial kept 1'), severityNumber: 9 },
      { body: str('partial too wide'), attributes: many },
      { body: str('partial kept 2'), severityNumber: 17 },
    ];
    const json = await post(jsonRequest(records), { 'content-type': 'application/json' });
    expect(json.statusCode, json.body).toBe(200);
    expect(json.json().partialSuccess).toMatchObject({
      rejectedLogRecords: 1,
      errorMessage: expect.stringMatching(/log record 1: record has \d+ fields/),
    });
    const kept = await storedEvents(t, (e) => messageOf(e).startsWith('partial'));
    expect(kept.map(messageOf)).toEqual(['partial kept 1', 'partial kept 2']);

    // The same in protobuf, answered in protobuf, gzip-compressed.
    const types = await otlpTypes();
    const request = types.request.fromObject({
      resourceLogs: [
        {
          scopeLogs: [
            {
              logRecords: [
                { body: str('proto partial kept') },
                { body: str('proto partial too wide'), attributes: many },
              ],
            },
          ],
        },
      ],
    });
    const bytes = gzipSync(types.request.encode(request).finish());
    const res = await post(bytes, { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-protobuf');
    const answer = types.response.toObject(types.response.decode(res.rawPayload), { longs: Number });
    expect(answer.partialSuccess.rejectedLogRecords).toBe(1);
    expect(await storedEvents(t, (e) => messageOf(e).startsWith('proto partial'))).toHaveLength(1);
  });

  it('keeps attributes that collide with its own keys under attributes.*', async () => {
    const res = await post(
      jsonRequest([
        {
          body: str('collisions'),
          timeUnixNano: '1772366400000000000',
          attributes: [
            { key: 'message', value: str('attr message') },
            { key: 'timestamp', value: str('attr time') },
            { key: 'app', value: str('attr app') },
            { key: 'plain', value: { doubleValue: 1.5 } },
          ],
        },
      ]),
      { 'content-type': 'application/json' },
    );
    expect(res.statusCode, res.body).toBe(200);
    const [row] = await storedEvents(t, (e) => e.message === 'collisions');
    expect(await apiEvent(row!)).toMatchObject({
      app: 'hand-made',
      ts: 1772366400,
      'attributes.message': 'attr message',
      'attributes.timestamp': 'attr time',
      'attributes.app': 'attr app',
      plain: 1.5,
    });
  });

  it('refuses an OTLP envelope sent to /api/ingest, naming /v1/logs', async () => {
    const before = (await storedEvents(t)).length;
    const res = await t.as(ingestToken, {
      method: 'POST',
      url: '/api/ingest',
      payload: jsonRequest([{ body: str('misdirected') }]),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'wrong_endpoint', detail: expect.stringContaining('/v1/logs') });
    const nd = await t.as(ingestToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: `${JSON.stringify({ streams: [] })}\n{"message":"x"}\n`,
    });
    expect(nd.statusCode).toBe(400);
    expect(nd.json().detail).toContain('/loki/api/v1/push');
    expect((await storedEvents(t)).length).toBe(before);
  });

  it('answers 401 without a valid token and 415 for other media types', async () => {
    const body = JSON.stringify(jsonRequest([{ body: str('never') }]));
    const none = await t.app.inject({
      method: 'POST',
      url: '/v1/logs',
      payload: body,
      headers: { 'content-type': 'application/json' },
    });
    expect(none.statusCode).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Token');
    expect(none.json()).toMatchObject({ code: 'not_authenticated' });
    const bad = await t.as('lsnope_nope', {
      method: 'POST',
      url: '/v1/logs',
      payload: body,
      headers: { 'content-type': 'application/x-protobuf' },
    });
    expect(bad.statusCode).toBe(401);
    const plain = await post(body, { 'content-type': 'text/plain' });
    expect(plain.statusCode).toBe(415);
    expect(plain.json()).toMatchObject({ code: 'unsupported_media_type' });
    expect(plain.json().detail).toContain('application/x-protobuf');
    expect(await storedEvents(t, (e) => e.message === 'never')).toHaveLength(0);
  });

  it('accepts an empty request and answers in its encoding', async () => {
    const json = await post({}, { 'content-type': 'application/json' });
    expect(json.statusCode).toBe(200);
    expect(json.json()).toEqual({});
    const proto = await post(Buffer.alloc(0), { 'content-type': 'application/x-protobuf' });
    expect(proto.statusCode).toBe(200);
    expect(proto.rawPayload).toHaveLength(0);
  });
});
