import { describe, expect, it } from 'vitest';
import { normaliseRecord } from '../../../../src/ingest/normalise.js';
import {
  decodeOtlpLogs,
  otlpLogRecords,
  otlpTypes,
  severityOfNumber,
} from '../../../../src/ingest/protocols/otlp.js';
import { MAX_VALUE_DEPTH, OtlpRequestError } from '../../../../src/ingest/protocols/otlp-model.js';

const TRACE = '5b8efff798038103d269b633813fc60c';
const SPAN = 'eee19b7ec3c1b174';
const str = (stringValue: string) => ({ stringValue });
const kv = (key: string, value: object) => ({ key, value });

/** One request in OTLP/JSON covering every value kind and every decision. */
const REQUEST = {
  resourceLogs: [
    {
      resource: {
        attributes: [
          kv('service.name', str('checkout')),
          kv('host.name', str('node-1')),
          kv('deployment.environment', str('prod')),
          kv('k8s', { kvlistValue: { values: [kv('pod', str('p-1'))] } }),
        ],
      },
      scopeLogs: [
        {
          scope: { name: 'lib', version: '2.0', attributes: [kv('tier', str('gold')), kv('name', str('x'))] },
          logRecords: [
            {
              timeUnixNano: '1772366400123456789',
              observedTimeUnixNano: '1772366400999000000',
              severityNumber: 13,
              severityText: 'WARN',
              body: str('plain text'),
              traceId: TRACE,
              spanId: SPAN,
              flags: 0x101,
              eventName: 'order.placed',
              attributes: [
                kv('s', str('text')),
                kv('b', { boolValue: false }),
                kv('i', { intValue: '42' }),
                kv('big', { intValue: '9007199254740993' }),
                kv('neg', { intValue: -7 }),
                kv('d', { doubleValue: 2.5 }),
                kv('nan', { doubleValue: 'NaN' }),
                kv('raw', { bytesValue: 'AQID' }),
                kv('list', { arrayValue: { values: [str('a'), { intValue: '1' }, {}] } }),
                kv('map', { kvlistValue: { values: [kv('inner', { boolValue: true })] } }),
                kv('empty', {}),
                kv('message', str('attribute message')),
                kv('timestamp', str('attribute time')),
                kv('resource.deployment.environment', str('attribute env')),
                kv('s', str('second s')),
              ],
            },
            {
              // No time: observed time; severity from text; a map body.
              observedTimeUnixNano: '1772366400000000000',
              severityText: 'error',
              body: { kvlistValue: { values: [kv('user', str('ann')), kv('n', { intValue: '3' })] } },
              traceId: '00000000000000000000000000000000',
              spanId: '',
            },
            {
              // No time at all; an enum given by name; an array body.
              severityNumber: 'SEVERITY_NUMBER_FATAL2',
              body: { arrayValue: { values: [str('x'), { doubleValue: 1 }] } },
            },
            { timeUnixNano: '0', severityNumber: 2, body: { intValue: '12' } },
            {
              timeUnixNano: '5000000000',
              severityNumber: 99,
              severityText: 'Information',
              body: { boolValue: true },
            },
          ],
        },
      ],
    },
  ],
};

/** The same request as protobufjs objects take it: ids as bytes, everything else as is. */
function protobufObject(json: typeof REQUEST): unknown {
  return JSON.parse(JSON.stringify(json), (key, value) =>
    (key === 'traceId' || key === 'spanId') && typeof value === 'string' ? Buffer.from(value, 'hex') : value,
  );
}

async function bothEncodings(json: object) {
  const { request } = await otlpTypes();
  const bytes = request.encode(request.fromObject(protobufObject(json as typeof REQUEST) as object)).finish();
  const fromProto = otlpLogRecords(await decodeOtlpLogs(bytes, 'protobuf', 100_000));
  const fromJson = otlpLogRecords(await decodeOtlpLogs(Buffer.from(JSON.stringify(json)), 'json', 100_000));
  return { fromProto, fromJson };
}

describe('OTLP logs → records', () => {
  it('gives the same records for the protobuf and the JSON encoding', async () => {
    const { fromProto, fromJson } = await bothEncodings(REQUEST);
    expect(fromProto).toEqual(fromJson);
    expect(fromJson).toHaveLength(5);
  });

  it('maps resource, scope, severity, body, ids and attributes', async () => {
    const [first, second, third, fourth, fifth] = (await bothEncodings(REQUEST)).fromJson;
    expect(first).toEqual({
      ts: '1772366400123456789',
      severity: 'warning',
      severity_text: 'WARN',
      message: 'plain text',
      app: 'checkout',
      host: 'node-1',
      'resource.deployment.environment': 'prod',
      'resource.k8s': { pod: 'p-1' },
      'scope.name': 'lib',
      'scope.version': '2.0',
      'scope.tier': 'gold',
      'scope.attributes.name': 'x',
      trace_id: TRACE,
      span_id: SPAN,
      trace_flags: 1,
      event_name: 'order.placed',
      s: 'text',
      b: false,
      i: 42,
      big: '9007199254740993',
      neg: -7,
      d: 2.5,
      nan: 'NaN',
      raw: 'AQID',
      list: ['a', 1, null],
      map: { inner: true },
      empty: null,
      'attributes.message': 'attribute message',
      'attributes.timestamp': 'attribute time',
      'attributes.resource.deployment.environment': 'attribute env',
    });
    expect(second).toMatchObject({
      ts: '1772366400000000000',
      severity: 'error',
      body: { user: 'ann', n: 3 },
    });
    expect(second).not.toHaveProperty('message');
    expect(second).not.toHaveProperty('trace_id');
    expect(second).not.toHaveProperty('span_id');
    expect(third).toMatchObject({ severity: 'critical', body: ['x', 1] });
    expect(third).not.toHaveProperty('ts');
    expect(fourth).toMatchObject({ severity: 'debug', message: '12' });
    expect(fourth).not.toHaveProperty('ts');
    // 5 s after the epoch: as ISO text, which the normaliser cannot misread by magnitude.
    expect(fifth).toMatchObject({ ts: '1970-01-01T00:00:05.000Z', severity: 'Information', message: 'true' });
  });

  it('makes records the normaliser turns into the expected events', async () => {
    const records = (await bothEncodings(REQUEST)).fromJson;
    const ctx = { receivedAt: 1_800_000_000_000, intake: 'otlp:test', newId: () => 'id' };
    const events = records.map((r) => normaliseRecord(r, ctx));
    expect(events.every((e) => e.ok)).toBe(true);
    const [first, second, third, , fifth] = events.map((e) => (e.ok ? e.event : null));
    expect(first).toMatchObject({
      ts: 1772366400123,
      severity: 'warning',
      message: 'plain text',
      app: 'checkout',
      host: 'node-1',
    });
    expect(first?.fields['map.inner']).toBe('true');
    expect(second).toMatchObject({ ts: 1772366400000, severity: 'error', message: null });
    expect(second?.fields).toMatchObject({ 'body.user': 'ann', 'body.n': '3' });
    expect(third?.ts).toBe(ctx.receivedAt);
    expect(fifth).toMatchObject({ ts: 5000, severity: 'info' });
  });

  it('reads snake_case names, ignores unknown ones and treats null as absent', async () => {
    const json = {
      resource_logs: [
        {
          scope_logs: [
            {
              log_records: [
                {
                  time_unix_nano: 1772366400000000000,
                  body: { string_value: 'snake' },
                  extra: 1,
                  flags: null,
                },
              ],
            },
          ],
        },
      ],
    };
    const records = otlpLogRecords(await decodeOtlpLogs(Buffer.from(JSON.stringify(json)), 'json', 100_000));
    expect(records).toEqual([{ ts: '1772366400000000000', message: 'snake' }]);
  });

  it('refuses malformed requests whole, naming where', async () => {
    const decode = (json: unknown) => decodeOtlpLogs(Buffer.from(JSON.stringify(json)), 'json', 100_000);
    await expect(decode([1])).rejects.toThrow(OtlpRequestError);
    await expect(decode({ resourceLogs: {} })).rejects.toThrow(/resourceLogs must be an array/);
    const record = (lr: object) => ({ resourceLogs: [{ scopeLogs: [{ logRecords: [lr] }] }] });
    await expect(decode(record({ traceId: 'xyz' }))).rejects.toThrow(/logRecords\[0\]\.traceId must be hex/);
    await expect(decode(record({ timeUnixNano: '-1' }))).rejects.toThrow(/non-negative integer/);
    await expect(decode(record({ body: { boolValue: 'yes' } }))).rejects.toThrow(/body\.boolValue/);
    await expect(decode(record({ severityNumber: 'LOUD' }))).rejects.toThrow(/severityNumber/);
    await expect(decodeOtlpLogs(Buffer.from('{'), 'json', 100_000)).rejects.toThrow(/not valid JSON/);
    await expect(decodeOtlpLogs(Buffer.from([0x0a, 0x05, 0x01]), 'protobuf', 100_000)).rejects.toThrow(
      /not a protobuf ExportLogsServiceRequest/,
    );
  });

  it('refuses values nested deeper than the limit in both encodings', async () => {
    let deep: object = str('bottom');
    for (let i = 0; i <= MAX_VALUE_DEPTH + 1; i++) deep = { arrayValue: { values: [deep] } };
    const json = { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: deep }] }] }] };
    const { request } = await otlpTypes();
    const bytes = request.encode(request.fromObject(json)).finish();
    const tooDeep = `nested deeper than ${MAX_VALUE_DEPTH}`;
    await expect(decodeOtlpLogs(bytes, 'protobuf', 100_000).then(otlpLogRecords)).rejects.toThrow(tooDeep);
    await expect(decodeOtlpLogs(Buffer.from(JSON.stringify(json)), 'json', 100_000)).rejects.toThrow(tooDeep);
  });

  it('maps every severity number', () => {
    expect([0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25].map(severityOfNumber)).toEqual([
      undefined,
      'debug',
      'debug',
      'debug',
      'debug',
      'info',
      'info',
      'warning',
      'warning',
      'error',
      'error',
      'critical',
      'critical',
      undefined,
    ]);
  });
});
